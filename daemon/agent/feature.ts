import { DEFAULT_PROFILE, profilePaths } from "../../shared/paths.js";
import { toAgentError } from "../../shared/errors.js";
import { credentialsFor } from "../models/credentials.js";
import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { ChatService } from "./chat-service.js";
import { sessionsHandlers } from "./sessions-handlers.js";
import { skillsHandlers } from "./skills/handlers.js";
import { SkillsService } from "./skills/skills-service.js";
import { createToolRegistry, vendorTools } from "./tools/index.js";
import { kanbanTools } from "../kanban/api.js";
import { computerUseTool } from "../computer-use/api.js";
import { memoryTool } from "./tools/memory-tool.js";
import { sessionSearchTool } from "./tools/session-search-tool.js";
import { skillViewTool } from "./tools/skill-tools.js";
import type { ToolRegistry } from "../tools/types.js";
import { workerHostHandlers } from "./worker-host.js";

/** The agent runtime: chat sessions as `session` actors, the tool loop and the chat RPC group. */
export function agentFeature(): Feature {
  let service: ChatService | null = null;
  let tools: ToolRegistry | null = null;
  let skills: SkillsService | null = null;
  let context: DaemonContext | null = null;
  return {
    name: "agent",
    provides: ["chat"],
    needs: { start: ["actors", "lsp", "profiles"], serve: ["approvals", "computerUse", "kanban", "mcp"] },
    async start(ctx: DaemonContext) {
      context = ctx;
      // The actors feature starts before this one (daemon/features.ts).
      const runtime = ctx.services.get("actors");
      skills = new SkillsService(ctx);
      await skills.start();
      const registry = createToolRegistry({ lsp: ctx.services.get("lsp") });
      registry.register(skillViewTool(skills));
      registry.register(memoryTool(skills.memory));
      const profiles = ctx.services.get("profiles");
      // x_search prefers an OAuth sign-in of its provider (x_search.provider) over a key, read per call.
      const searchStore = (p: string | undefined) => credentialsFor(profilePaths(ctx.paths.home, p ?? DEFAULT_PROFILE).dir);
      const searchProvider = (p: string | undefined) => profiles.loadedConfig(p ?? DEFAULT_PROFILE).current().x_search.provider;
      const vendor = vendorTools({
        config: (p) => profiles.loadedConfig(p ?? DEFAULT_PROFILE).current(),
        signedIn: (p) => searchStore(p).hasOAuth(searchProvider(p)),
        oauthToken: async (p) => (searchStore(p).hasOAuth(searchProvider(p)) ? searchStore(p).accessToken(searchProvider(p)) : undefined),
      });
      for (const tool of vendor) registry.register(tool);
      // The desktop belongs to the computer-use feature (it starts after this one): reached at each call.
      registry.register(computerUseTool(() => ctx.services.get("computerUse")));
      // The board in process, through the kanban feature's interface (it starts after this one).
      for (const tool of kanbanTools((method, params) => ctx.services.get("kanban").call(method, params))) registry.register(tool);
      tools = registry;
      const chat = new ChatService(ctx, runtime, tools, skills);
      await chat.start();
      registry.register(sessionSearchTool(chat.history));
      service = chat;
      ctx.services.provide("chat", chat);
      ctx.rpc.register(handlers(chat));
      ctx.rpc.register(skillsHandlers(skills));
      ctx.rpc.register({
        "chat.tools.list": async ({ profile }, call) => {
          const name = profiles.check(profile ?? call.profile);
          const env = (await profiles.config(name)).env();
          return { profile: name, tools: registry.catalog({ profile: name, env, cwd: process.cwd() }) };
        },
      });
      ctx.rpc.register(
        workerHostHandlers({
          skills,
          tools: registry,
          profiles: ctx.services.get("profiles"),
          config: ctx.config,
          mcp: () => ctx.services.get("mcp"),
          approvals: () => ctx.services.get("approvals"),
        }),
      );
      ctx.rpc.register(sessionsHandlers(chat));
      reportStatus(ctx, chat);
    },
    async reload(ctx) {
      if (service) reportStatus(ctx, service);
    },
    ready() {
      // The search index loads now, not during the start (README "The search index on disk");
      // a search answers during the load (docs/sessions.md), and `agent daemon status` tells it.
      const search = service?.search;
      const ctx = context;
      if (!search || !ctx) return;
      ctx.components.set("search", { status: "ok", detail: "loading the session search index" });
      search.ready().then(
        () => ctx.components.set("search", { status: "ok", detail: `${search.documents} messages indexed` }),
        (error) => ctx.components.set("search", { status: "degraded", detail: `the session search index failed to load: ${toAgentError(error).message}` }),
      );
    },
    async stop() {
      await service?.stop();
      await tools?.close();
      await skills?.stop();
    },
  };
}

/** The agent's line in `agent daemon status`. */
function reportStatus(ctx: DaemonContext, chat: ChatService): void {
  const status = chat.status();
  ctx.components.set(
    "agent",
    status.configured ? { status: "ok", detail: `${status.provider} ${status.model}` } : { status: "degraded", detail: "no model provider configured" },
  );
}

function handlers(chat: ChatService): Partial<Handlers> {
  return {
    "chat.ping": () => ({ ok: true }),
    "chat.send": (p, call) => chat.send(p, call),
    "chat.interrupt": ({ sessionId }) => ({ ok: true, interrupted: chat.interrupt(sessionId) }),
    "chat.attach": ({ sessionId, interactive }, call) => chat.attach(sessionId, call, interactive === true),
    // A connection sees its own profile's sessions (`agent sessions list --all-profiles` sees every one).
    "chat.sessions.list": ({ limit }, call) => ({ sessions: chat.list(limit, call.profile) }),
    "chat.sessions.get": ({ sessionId, from, limit }) => chat.get(sessionId, from, limit),
    "chat.sessions.delete": async ({ sessionId }) => {
      await chat.delete(sessionId);
      return { ok: true, deleted: sessionId };
    },
    "chat.sessions.create": async (p, call) => {
      const e = await chat.createSession({ ...p, profile: p.profile ?? call.profile });
      return { session: chat.find(e.id)! };
    },
    "chat.sessions.append": async ({ sessionId, messages, usage }) => ({ ok: true, messageCount: await chat.append(sessionId, messages as never, usage) }),
    "chat.snapshot": async ({ sessionId, name }) => ({ path: await chat.snapshot(sessionId, name) }),
    "chat.btw": ({ sessionId, question, provider }, call) => chat.btw(sessionId, question, provider, call.profile),
    "chat.quota": () => ({ buckets: chat.rateLimits.list() }),
    "chat.status": ({ provider }, call) => chat.statusFor(call.profile, provider),
    "coder.runtime": (p, call) => chat.coderRuntime(p, call.profile),
    "coder.install": () => chat.coderInstall(),
  };
}
