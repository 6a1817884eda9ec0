/**
 * A kanban worker's turn, in its own process: `agent chat -q` execs this file when
 * `AGENT_KANBAN_TASK` is set, so the worker's model calls and tools run here (a crash or a kill
 * takes only the worker down) while the transcript is still written by the daemon alone,
 * through `chat.sessions.*`. The turn is set up by the same code as a daemon turn
 * (turn-setup.ts, models.ts, the validated config); only the steps are plain calls here.
 *
 *   node dist/daemon/agent/worker-main.js --home <dir> --prompt=<text> [--image=<abs path>]...
 *     [--session=<id>] [--max-turns=<n>] [--provider=<name>] [--profile=<name>] [--json]
 *
 * Exit codes are the CLI's: 0 done, 130 interrupted, 1 stopped at max turns or failed, 75 rate
 * limited (the task goes back to ready), and the registry's code for any other error.
 */
import { resolve } from "node:path";
import { commandJournalDir, useCommandJournal } from "../process/command-journal.js";
import { parseArgs } from "node:util";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import { EXIT } from "../../shared/error-codes.js";
import { AgentError } from "../../shared/errors.js";
import { readFile } from "node:fs/promises";
import { DEFAULT_PROFILE, homePaths, profilePaths } from "../../shared/paths.js";
import type { ChatSendResult } from "../../shared/protocol/chat.js";
import { reportFailure } from "../../shared/report-failure.js";
import { FileConfigSource } from "../config/config-source.js";
import { runTurn } from "./loop.js";
import { ModelResolver } from "../models/models.js";
import { z } from "zod";
import { configSelectsCoder } from "../coder/coder-service.js";
import { createToolRegistry, defineTool, vendorTools } from "./tools/index.js";
import { kanbanTools } from "../kanban/api.js";
import { failedEditsFooter } from "./tools/failed-edits.js";
import { checkImage, newTurnId, systemPrompt, titleFrom, userMessage, withSections } from "./turn-setup.js";
import { snakeKeys } from "../../shared/json-keys.js";
import { envValue } from "../../shared/config/env.js";

interface WorkerArgs {
  home: string;
  prompt: string;
  images: string[];
  sessionId?: string;
  maxTurns?: number;
  provider?: string;
  profile?: string;
  json: boolean;
}

const WORKER_OPTIONS = {
  home: { type: "string" },
  prompt: { type: "string" },
  image: { type: "string", multiple: true },
  session: { type: "string" },
  "max-turns": { type: "string" },
  provider: { type: "string" },
  profile: { type: "string" },
  json: { type: "boolean" },
} as const;

function parseWorkerArgs(argv: string[]): WorkerArgs {
  let values: ReturnType<typeof parseArgs<{ args: string[]; strict: true; allowPositionals: false; options: typeof WORKER_OPTIONS }>>["values"];
  try {
    ({ values } = parseArgs({ args: argv, strict: true, allowPositionals: false, options: WORKER_OPTIONS }));
  } catch (error) {
    throw new AgentError("usage.invalid", `worker: ${(error as Error).message}`);
  }
  if (!values.home) throw new AgentError("usage.invalid", "worker: --home is required");
  if (values.prompt === undefined) throw new AgentError("usage.invalid", "worker: --prompt is required");
  const maxTurns = values["max-turns"] === undefined ? undefined : Number(values["max-turns"]);
  if (maxTurns !== undefined && (!Number.isInteger(maxTurns) || maxTurns < 1)) throw new AgentError("usage.invalid", "--max-turns must be a positive integer");
  return {
    home: values.home,
    prompt: values.prompt,
    images: values.image ?? [],
    sessionId: values.session,
    maxTurns,
    provider: values.provider,
    profile: values.profile,
    json: values.json ?? false,
  };
}

async function runWorkerTurn(args: WorkerArgs, client: DaemonClient, signal: AbortSignal): Promise<ChatSendResult> {
  // The same checks and config as a daemon turn, before any session is created or touched.
  const images = await Promise.all(args.images.map(checkImage));
  const paths = homePaths(args.home);
  useCommandJournal(commandJournalDir(args.home));
  const homeConfig = await FileConfigSource.read({ config: paths.config, env: paths.env });
  // The worker runs as the profile the daemon accepted for its connection: that profile's config and persona.
  const profile = profilePaths(args.home, client.daemon.profile ?? DEFAULT_PROFILE);
  const config = profile.name === DEFAULT_PROFILE ? homeConfig : await homeConfig.layered(profile);
  const soul = (await readFile(profile.soul, "utf8").catch(() => "")).trim() || null;
  const models = new ModelResolver(config, profile.dir);
  const model = models.model({ provider: args.provider });
  const cwd = process.cwd();
  const sessionId =
    args.sessionId ?? (await client.call("chat.sessions.create", { cwd, profile: args.profile, title: titleFrom(args.prompt), kind: "kanban" })).session.id;
  if (configSelectsCoder(config.current())) {
    // The coder runtime: the session's app-server lives in the daemon (one per session, with the
    // one approval service), so the turn runs there, with nobody to ask (coder_runtime.auto_approve decides).
    const stop = () => void client.call("chat.interrupt", { sessionId }).catch(() => undefined);
    signal.addEventListener("abort", stop, { once: true });
    try {
      return await client.call("chat.send", {
        sessionId,
        prompt: args.prompt,
        ...(args.images.length ? { images: args.images.map((p) => resolve(p)) } : {}),
        ...(args.maxTurns ? { maxTurns: args.maxTurns } : {}),
        ...(args.provider ? { provider: args.provider } : {}),
        cwd,
        interactive: false,
      });
    } finally {
      signal.removeEventListener("abort", stop);
    }
  }
  const history = args.sessionId ? (await client.call("chat.sessions.get", { sessionId })).messages : [];
  const turnId = newTurnId();
  const append = async (messages: typeof history) => {
    await client.call("chat.sessions.append", { sessionId, messages: messages as never });
  };
  const user = await userMessage(turnId, args.prompt, images);
  await append([user]);
  history.push(user);
  // The same tools and prompt sections as a daemon turn of this profile: the built-in tools and
  // the kanban tools run here, skill_view and memory in the daemon (it owns their state).
  const context = await client.call("chat.worker.context", {});
  const tools = createToolRegistry();
  for (const tool of kanbanTools((method, params) => client.call(method, params as never))) tools.register(tool);
  for (const spec of context.tools) tools.register(hostedTool(client, spec, sessionId));
  for (const tool of vendorTools({ config: () => config.current() })) tools.register(tool);
  try {
    const outcome = await runTurn(
      { sessionId, turnId, history, maxTurns: args.maxTurns ?? config.current().agent.max_turns, signal },
      {
        model,
        tools,
        toolContext: { cwd, sessionId, env: models.env(), profile: profile.name },
        step: (_name, fn) => fn(),
        // The one approval service decides, in the daemon: a worker has nobody to ask (non-interactive rules).
        approve: (ask) => client.call("approvals.request", { ...ask, sessionId, workspace: cwd }),
        append,
        emit: () => undefined,
        footer: (mutations) => failedEditsFooter(mutations, { config: config.current(), env: process.env }),
        system: withSections(systemPrompt(cwd, { kanbanTask: envValue("AGENT_KANBAN_TASK") ?? "?", soul }), context.sections),
      },
    );
    return {
      sessionId,
      turnId,
      answer: outcome.answer,
      footer: outcome.footer,
      stopReason: outcome.stopReason,
      modelCalls: outcome.modelCalls,
      toolCalls: outcome.toolCalls,
      usage: { turn: outcome.usage, session: outcome.usage },
      model: model.provider.model,
      provider: model.provider.name,
    };
  } finally {
    await tools.close();
  }
}

/** A tool the daemon runs for this worker (skill_view, memory), offered with the daemon's own description and schema. */
function hostedTool(
  client: DaemonClient,
  spec: { name: string; description: string; toolset: string; parameters: Record<string, unknown> },
  sessionId: string,
) {
  return defineTool({
    name: spec.name,
    description: spec.description,
    toolset: spec.toolset,
    // The daemon validates the arguments against the tool's own schema.
    args: z.record(z.string(), z.unknown()),
    parameters: spec.parameters,
    async run(args, ctx) {
      const result = await client.call("chat.worker.tool", { sessionId, name: spec.name, args, cwd: ctx.cwd });
      return { ok: result.ok, output: result.output };
    },
  });
}

async function main(argv: string[]): Promise<number> {
  const args = parseWorkerArgs(argv);
  const controller = new AbortController();
  process.on("SIGINT", () => controller.abort());
  const client = await connectDaemon({ home: args.home, autostart: true, ...(args.profile ? { profile: args.profile } : {}) });
  try {
    const result = await runWorkerTurn(args, client, controller.signal);
    if (args.json) process.stdout.write(`${JSON.stringify(snakeKeys(result), null, 2)}\n`);
    else if (result.answer) process.stdout.write(result.answer.endsWith("\n") ? result.answer : `${result.answer}\n`);
    return result.stopReason === "done" ? EXIT.ok : result.stopReason === "interrupted" ? EXIT.interrupted : EXIT.failure;
  } finally {
    client.close();
  }
}

const argv = process.argv.slice(2);
main(argv).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.exitCode = reportFailure(error, argv);
  },
);
