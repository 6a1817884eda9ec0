import { execFile } from "node:child_process";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentConfig, McpServerEntry } from "../../shared/config/defaults.js";
import type { Clock } from "../../shared/clock.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { CoderRuntimeMode, CoderRuntimeStatus } from "../../shared/protocol/coder.js";
import { contentText } from "../../shared/message-text.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { APP_VERSION } from "../../shared/version.js";
import type { ProviderConfig } from "../models/resolve.js";
import { AppServerClient } from "./app-server-client.js";
import {
  binaryVersion,
  CODEX_PACKAGE,
  findCoderBinary,
  installHint,
  MIN_CODEX_VERSION,
  PINNED_CODEX_VERSION,
  toolsDir,
  versionBelow,
  type CoderBinary,
} from "./coder-binary.js";
import { type CoderServerHandle, OWN_SERVER_NAME } from "./coder-turn.js";

/** The runtime name, in config (`model.vendor_runtime`, `model.api_mode`) and in `/coder-runtime`. */
export const CODER_APP_SERVER = "coder_app_server";
/** The model provider id codex knows our upstream by, and the variable its key travels in. */
const PROVIDER_ID = "agent";
const KEY_ENV = "AGENT_CODER_API_KEY";
/** How long a new app-server's first turn waits for our own tool server to come up. */
const OWN_SERVER_WAIT_MS = 15_000;

export interface CoderServiceDeps {
  home: string;
  clock: Clock;
  /** The MCP servers of a profile (as written) for the managed block. */
  mcpEntries(profile: string): Promise<Record<string, McpServerEntry>>;
  log?: { info(m: string): void; warn(m: string): void };
}

/** The `coder_runtime` config section, with defaults. */
export function coderSettings(config: AgentConfig): { command: string; turnTimeoutS: number; silenceS: number; autoApprove: boolean; codexHome: string } {
  const c = ((config as unknown as { coder_runtime?: Record<string, unknown> }).coder_runtime ?? {}) as Record<string, unknown>;
  return {
    command: typeof c.command === "string" ? c.command : "",
    turnTimeoutS: typeof c.turn_timeout === "number" && c.turn_timeout > 0 ? c.turn_timeout : 600,
    silenceS: typeof c.silence_timeout === "number" && c.silence_timeout > 0 ? c.silence_timeout : 120,
    autoApprove: c.auto_approve === true,
    codexHome: typeof c.codex_home === "string" ? c.codex_home : "",
  };
}

/** Whether config selects the coder runtime by default (`model.vendor_runtime` or `model.api_mode`). */
export function configSelectsCoder(config: AgentConfig): boolean {
  const m = config.model as AgentConfig["model"] & { vendor_runtime?: string; api_mode?: string };
  return m.vendor_runtime === CODER_APP_SERVER || m.api_mode === CODER_APP_SERVER;
}

/** A provider that speaks the Responses API: OpenAI's own endpoint, or one declared so with `model.api_mode`. */
export function eligibleProvider(config: AgentConfig, provider: ProviderConfig): string | null {
  const mode = (config.model as { api_mode?: string }).api_mode ?? "";
  if (mode === "responses" || mode === CODER_APP_SERVER) return null;
  try {
    if (new URL(provider.baseUrl).hostname === "api.openai.com") return null;
  } catch {
    // not a URL: not eligible
  }
  return `provider "${provider.name}" (${provider.baseUrl}) is not known to speak the Responses API, which the coder runtime needs; if it does, set model.api_mode: responses`;
}

/** What a session's app-server is started with. */
export interface CoderSpawn {
  profile: string;
  config: AgentConfig;
  env: NodeJS.ProcessEnv;
  provider: ProviderConfig;
  cwd: string;
  /** The session's messages before this turn (read only when a new thread starts). */
  history?: () => Promise<StoredMessage[]>;
}

/** At most this much of a session's past goes into a new thread's instructions. */
const HISTORY_CHARS = 20_000;

interface SessionServer {
  key: string;
  client: AppServerClient | null;
  threadId: string | null;
  starting: Promise<{ client: AppServerClient; threadId: string }> | null;
  /** The credential the running server was started with (codex reads it once, from its environment). */
  token: string | null;
}

/**
 * The coder runtime's side of the daemon: the external binary (found, checked, installed), the
 * managed config block, and one app-server per session, reused across its turns and replaced
 * when it died or hung (coder-turn.ts runs the turns).
 */
export class CoderService {
  readonly #servers = new Map<string, SessionServer>();
  #stopped = false;
  /** The plugins the last app-server listed (plugin/list), null before one answered. */
  #plugins: string[] | null = null;

  constructor(private readonly deps: CoderServiceDeps) {}

  codexHome(config: AgentConfig, profile: string): string {
    const s = coderSettings(config);
    return s.codexHome || join(this.deps.home, "coder", profile === "default" ? "codex-home" : `codex-home-${profile}`);
  }

  async binary(config: AgentConfig, env: NodeJS.ProcessEnv): Promise<CoderBinary | null> {
    const found = await findCoderBinary({ command: coderSettings(config).command, env, home: this.deps.home });
    if (!found) return null;
    return { ...found, version: await binaryVersion(found.path).catch(() => null) };
  }

  /** The binary, or why the runtime cannot be used (with the install hint). */
  async usableBinary(config: AgentConfig, env: NodeJS.ProcessEnv): Promise<CoderBinary> {
    const bin = await this.binary(config, env);
    const configured = coderSettings(config).command;
    if (!bin) {
      throw new AgentError(
        "coder.not_installed",
        `${configured ? `coder_runtime.command (${configured}) is not an executable file` : "the codex binary was not found"}; ${installHint(this.deps.home)}`,
      );
    }
    if (!bin.version || versionBelow(bin.version, MIN_CODEX_VERSION)) {
      throw new AgentError(
        "coder.not_installed",
        `${bin.path} is codex ${bin.version ?? "of an unknown version"}; the coder runtime needs ${MIN_CODEX_VERSION} or newer: ${installHint(this.deps.home)}`,
      );
    }
    return bin;
  }

  /** `/coder-runtime` and `agent coder-runtime status`: the mode asked for, checked (enabling writes the managed block). */
  async runtime(options: {
    profile: string;
    config: AgentConfig;
    env: NodeJS.ProcessEnv;
    provider: () => ProviderConfig;
    mode?: "on" | "auto" | "off" | typeof CODER_APP_SERVER;
    /** The mode the client holds now (null: it follows config). */
    current?: CoderRuntimeMode | null;
  }): Promise<CoderRuntimeStatus> {
    const { config, env } = options;
    const enabling = options.mode === "on" || options.mode === CODER_APP_SERVER;
    const bin = await this.binary(config, env);
    const base = {
      binary: bin?.path ?? null,
      source: bin?.source ?? null,
      version: bin?.version ?? null,
      pinned: PINNED_CODEX_VERSION,
      codexHome: this.codexHome(config, options.profile),
      fromConfig: configSelectsCoder(config),
      plugins: this.#plugins,
    };
    if (enabling) {
      await this.usableBinary(config, env);
      const provider = options.provider();
      const why = eligibleProvider(config, provider);
      if (why) throw new AgentError("coder.not_eligible", why);
      const written = await this.writeConfig(options.profile, config, provider);
      return { ...base, mode: CODER_APP_SERVER, active: true, configPath: written.path, skipped: written.skipped };
    }
    if (options.mode === "auto" || options.mode === "off") return { ...base, mode: "default", active: false, configPath: null, skipped: [] };
    const mode = options.current ?? (base.fromConfig ? CODER_APP_SERVER : "default");
    return { ...base, mode, active: mode === CODER_APP_SERVER, configPath: null, skipped: [] };
  }

  async writeConfig(profile: string, config: AgentConfig, provider: ProviderConfig): Promise<{ path: string; skipped: string[] }> {
    const codexHome = this.codexHome(config, profile);
    await mkdir(codexHome, { recursive: true, mode: 0o700 });
    const serveMain = fileURLToPath(new URL("../mcp/serve-main.js", import.meta.url));
    // smol-toml loads with the first enable, not at daemon start.
    const { writeManagedConfig } = await import("./managed-config.js");
    return writeManagedConfig({
      codexHome,
      servers: await this.deps.mcpEntries(profile),
      ownServer: { command: process.execPath, args: [serveMain, "--home", this.deps.home] },
      provider: { id: PROVIDER_ID, baseUrl: provider.baseUrl, envKey: KEY_ENV },
    });
  }

  /** `agent coder-runtime install`: the pinned package into the home's tool folder, with npm. */
  async install(env: NodeJS.ProcessEnv): Promise<{ path: string; version: string | null; output: string }> {
    const dir = toolsDir(this.deps.home);
    await mkdir(dir, { recursive: true });
    const npm = process.platform === "win32" ? "npm.cmd" : "npm";
    const output = await new Promise<string>((resolve, reject) => {
      execFile(
        npm,
        ["install", "--prefix", dir, "--no-save", "--no-audit", "--no-fund", `${CODEX_PACKAGE}@${PINNED_CODEX_VERSION}`],
        { env, timeout: 10 * 60_000, maxBuffer: 4 * 1024 * 1024 },
        (error, stdout, stderr) => {
          if (error)
            reject(
              new AgentError(
                "coder.install_failed",
                `npm install ${CODEX_PACKAGE}@${PINNED_CODEX_VERSION} failed: ${String(stderr || error.message)
                  .trim()
                  .slice(-1000)}`,
              ),
            );
          else resolve(`${stdout}${stderr}`.trim());
        },
      );
    });
    const path = join(dir, "node_modules", ".bin", "codex");
    return { path, version: await binaryVersion(path).catch(() => null), output: output.slice(-2000) };
  }

  /** The session's app-server handle for one turn. */
  handle(sessionId: string, spawn: CoderSpawn): CoderServerHandle {
    const key = `${spawn.profile}\0${spawn.provider.baseUrl}\0${spawn.provider.model}\0${spawn.cwd}`;
    let entry = this.#servers.get(sessionId);
    if (entry && entry.key !== key) {
      // Another model or workspace: a fresh server with a fresh thread.
      void entry.client?.stop();
      entry = undefined;
    }
    if (!entry) {
      entry = { key, client: null, threadId: null, starting: null, token: null };
      this.#servers.set(sessionId, entry);
    }
    const e = entry;
    return {
      ready: async () => {
        if (this.#stopped) throw new AgentError("daemon.stopping", "the daemon is stopping");
        if (e.client?.alive && e.threadId && !e.starting) {
          // An OAuth token refreshed or replaced since the server started: codex still holds the
          // old one, so the server is replaced (the new thread gets the session's history).
          const token = await spawn.provider.credentials.token();
          if (token === e.token && e.client?.alive && e.threadId) return { client: e.client, threadId: e.threadId };
          if (token !== e.token && e.client) {
            const old = e.client;
            e.client = null;
            e.threadId = null;
            await old.stop();
          }
        }
        if (e.client?.alive && e.threadId) return { client: e.client, threadId: e.threadId };
        e.starting ??= this.#start(spawn).then(
          (r) => {
            e.client = r.client;
            e.threadId = r.threadId;
            e.token = r.token;
            e.starting = null;
            return { client: r.client, threadId: r.threadId };
          },
          (error) => {
            e.starting = null;
            throw error;
          },
        );
        return e.starting;
      },
      discard: async (why) => {
        this.deps.log?.warn(`coder app-server of session ${sessionId} replaced: ${why}`);
        const c = e.client;
        e.client = null;
        e.threadId = null;
        await c?.stop();
      },
    };
  }

  async #start(spawn: {
    profile: string;
    config: AgentConfig;
    env: NodeJS.ProcessEnv;
    provider: ProviderConfig;
    cwd: string;
  }): Promise<{ client: AppServerClient; threadId: string; token: string }> {
    const bin = await this.usableBinary(spawn.config, spawn.env);
    await this.writeConfig(spawn.profile, spawn.config, spawn.provider);
    // The provider's credential now (its OAuth sign-in when there is one, else its key): codex reads it from its environment.
    const key = await spawn.provider.credentials.token();
    const env: NodeJS.ProcessEnv = { ...spawn.env, CODEX_HOME: this.codexHome(spawn.config, spawn.profile), [KEY_ENV]: key };
    const client = new AppServerClient({ command: bin.path, args: ["app-server"], env, cwd: spawn.cwd }, () => this.deps.clock.now());
    const startupMs = 60_000;
    const timer = this.deps.clock.setTimeout(() => void client.stop(), startupMs);
    timer.unref();
    try {
      // Our own tool server starts in the background after thread/start; its first turn waits
      // for it (ready or failed, at most OWN_SERVER_WAIT_MS), so the tools are there from the start.
      let ownReady: () => void = () => undefined;
      const ownServer = new Promise<void>((resolve) => {
        ownReady = resolve;
      });
      client.onNotification = (method, params) => {
        if (method === "mcpServer/startupStatus/updated" && params?.name === OWN_SERVER_NAME && params.status !== "starting") ownReady();
      };
      await client.request("initialize", { clientInfo: { name: "agent", title: "agent", version: APP_VERSION }, capabilities: null });
      client.notify("initialized");
      // What the server offers besides our tools: shown by /coder-runtime; never waited for (it may look far).
      void client
        .request("plugin/list", { cwds: [spawn.cwd] })
        .then((r: { marketplaces?: Array<{ plugins?: Array<{ name?: string; id?: string }> }> }) => {
          this.#plugins = (r?.marketplaces ?? []).flatMap((m) => (m.plugins ?? []).map((p) => String(p.name ?? p.id ?? "?")));
        })
        .catch(() => undefined);
      const r = await client.request("thread/start", {
        cwd: spawn.cwd,
        model: spawn.provider.model,
        modelProvider: PROVIDER_ID,
        approvalPolicy: "untrusted",
        sandbox: "workspace-write",
        // A new thread for a session with a past (an earlier runtime, a replaced server, a daemon
        // restart): what was said so far, so the conversation goes on.
        ...(await this.#history(spawn)),
      });
      const threadId = r?.thread?.id;
      if (typeof threadId !== "string") throw new AgentError("coder.protocol", "thread/start answered without a thread id");
      let waitTimer: ReturnType<Clock["setTimeout"]> | null = null;
      await Promise.race([ownServer, new Promise<void>((resolve) => (waitTimer = this.deps.clock.setTimeout(resolve, OWN_SERVER_WAIT_MS)))]);
      this.deps.clock.clearTimeout(waitTimer);
      client.onNotification = () => undefined;
      return { client, threadId, token: key };
    } catch (error) {
      await client.stop();
      throw new AgentError("coder.unavailable", `the coder app-server (${bin.path}) did not start: ${toAgentError(error).message}`);
    } finally {
      this.deps.clock.clearTimeout(timer);
    }
  }

  async #history(spawn: CoderSpawn): Promise<{ developerInstructions?: string }> {
    const messages = (await spawn.history?.().catch(() => [])) ?? [];
    const lines: string[] = [];
    for (const m of messages) {
      const text = contentText(m.content).trim();
      if ((m.role === "user" || m.role === "assistant") && text) lines.push(`${m.role}: ${text}`);
    }
    if (!lines.length) return {};
    let joined = lines.join("\n");
    if (joined.length > HISTORY_CHARS) joined = `…${joined.slice(-HISTORY_CHARS)}`;
    return { developerInstructions: `This conversation continues an earlier session. What was said so far:\n${joined}` };
  }

  /** A deleted session's server goes. */
  async forget(sessionId: string): Promise<void> {
    const e = this.#servers.get(sessionId);
    this.#servers.delete(sessionId);
    await e?.client?.stop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    const all = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.all(all.map((e) => e.client?.stop()));
  }
}
