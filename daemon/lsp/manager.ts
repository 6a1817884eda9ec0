import { type Clock, systemClock } from "../../shared/clock.js";
import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import type { Diagnostic } from "vscode-languageserver-protocol";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { AgentError } from "../../shared/errors.js";
import type { LspPendingDiagnostics, LspStatus, LspServerInfo, LspWhich, LspRestartResult, LspInstallResult } from "../../shared/protocol/lsp.js";
import type { Logger } from "../log/logger.js";
import { LspClient } from "./client.js";
import { formatBlock, lineMap, newErrors } from "./diagnostics.js";
import { Installer } from "./installer.js";
import { resolveCommand, type ResolvedCommand } from "./resolve-command.js";
import { SERVERS, serverById, serverForFile, type ServerSpec } from "./servers.js";
import { findWorkspace } from "./workspace.js";

/** Servers unused this long are stopped; the next write starts them again. */
export const IDLE_STOP_MS = 10 * 60_000;
/** How often idle servers are looked for. */
const SWEEP_EVERY_MS = 30_000;
/** With `wait_mode: settle`, a server counts as done after this long without a further publish. */
const SETTLE_MS = 300;

export type { Clock };

export type LspSettings = AgentConfig["lsp"];

export interface LspManagerOptions {
  /** `$AGENT_HOME/lsp`: where servers are installed. */
  lspHome: string;
  log: Logger;
  settings(): LspSettings;
  /** The environment servers and npm run with. */
  env(): NodeJS.ProcessEnv;
  clock?: Clock;
  idleMs?: number;
}

interface Entry {
  key: string;
  client: LspClient;
  ready: Promise<void>;
  command: ResolvedCommand;
  lastUsed: number;
  /** Diagnostics are pulled from tsserver instead of waiting for a publish. */
  pull: boolean;
}

/** Where a file would go: its server, workspace and command, or why it gets no server. */
interface Route {
  spec: ServerSpec | null;
  languageId: string | null;
  matchedBy: string | null;
  workspace: string | null;
  command: ResolvedCommand | null;
  key: string | null;
  /** Set when the file gets only the syntax check. */
  skip: string | null;
}

/**
 * Runs language servers per (server, git worktree) and turns their diagnostics into the
 * `lsp_diagnostics` of write_file and patch: a baseline before the write, the new errors after.
 */
export class LspManager {
  private readonly entries = new Map<string, Entry>();
  /** (server, workspace) pairs that failed: skipped until `agent lsp restart`. */
  private readonly broken = new Map<string, { id: string; root: string; reason: string; since: number }>();
  /** Servers whose automatic install failed once: not retried until a restart. */
  private readonly installFailed = new Set<string>();
  private readonly locks = new Map<string, Promise<void>>();
  private readonly installer: Installer;
  private readonly clock: Clock;
  private readonly idleMs: number;
  private sweeper: ReturnType<Clock["setTimeout"]> | null = null;
  private closed = false;

  constructor(private readonly options: LspManagerOptions) {
    this.clock = options.clock ?? systemClock;
    this.idleMs = options.idleMs ?? IDLE_STOP_MS;
    this.installer = new Installer(options.lspHome, options.log, options.env);
    this.armSweep();
  }

  private route(path: string): Route {
    const settings = this.options.settings();
    const found = serverForFile(path);
    const workspace = findWorkspace(path);
    const base = { spec: found?.spec ?? null, languageId: found?.languageId ?? null, matchedBy: found?.by ?? null, workspace, command: null, key: null };
    if (!settings.enabled) return { ...base, skip: "lsp.enabled is false" };
    if (!found) return { ...base, skip: "no known language server serves this file type" };
    const override = settings.servers?.[found.spec.id];
    if (override?.disabled) return { ...base, skip: `lsp.servers.${found.spec.id}.disabled is true` };
    if (!workspace) return { ...base, skip: "the file is not inside a git worktree" };
    const key = `${found.spec.id}\u0000${workspace}`;
    const command = resolveCommand(found.spec, { override: override?.command, lspHome: this.options.lspHome, workspace, path: this.options.env().PATH });
    const broken = this.broken.get(key);
    if (broken) return { ...base, command, key, skip: `marked broken for this project: ${broken.reason} (agent lsp restart ${found.spec.id})` };
    if (!command) return { ...base, key, skip: `${found.spec.id} ${this.missingHint(found.spec)}` };
    return { ...base, command, key, skip: null };
  }

  /**
   * Called before a write: captures the baseline (concurrently with the write) and returns the
   * step to run after it, or undefined when the file gets no language-server tier. Never throws.
   */
  async beforeWrite(rawPath: string, signal?: AbortSignal): Promise<LspPendingDiagnostics | undefined> {
    if (this.closed) return undefined;
    const path = resolve(rawPath);
    const route = this.route(path);
    if (route.skip || !route.spec || !route.command || !route.key) {
      if (!route.spec || !route.key) return undefined;
      const missing = !route.command && !route.skip?.startsWith("marked");
      if (missing) this.autoInstall(route.spec);
      // A server that is missing (being installed) or broken: the write says why it has no diagnostics.
      const note = missing
        ? `no language-server diagnostics for this write: ${route.spec.id} ${this.missingHint(route.spec)}`
        : `no language-server diagnostics for this write: ${route.spec.id} ${route.skip}`;
      return { after: async () => undefined, cancel: () => undefined, note: () => note };
    }
    const release = await this.lock(path);
    try {
      const oldText = await readFile(path, "utf8").catch(() => null);
      const entry = this.entryFor(route.key, route.spec, route.workspace!, route.command);
      entry.lastUsed = this.clock.now();
      const baseline = this.baseline(entry, path, route.languageId!, oldText);
      baseline.catch(() => undefined);
      let done = false;
      const finish = () => {
        if (!done) release();
        done = true;
      };
      const starting = entry.client.state === "starting";
      let note: string | undefined;
      const id = route.spec.id;
      return {
        after: async (lintClean) => {
          try {
            if (!lintClean) return undefined;
            const base = await baseline;
            if (!base) {
              note = this.broken.has(entry.key)
                ? `no language-server diagnostics for this write: ${id} did not ${starting ? "start" : "answer"} in time and is marked broken for this project (agent lsp restart ${id})`
                : `no language-server diagnostics for this write: ${id} was too slow this time`;
              return undefined;
            }
            const block = await this.afterWrite(entry, path, route.languageId!, oldText, base, signal);
            if (block === null) note = `no language-server diagnostics for this write: ${id} did not answer within ${this.options.settings().wait_timeout} s`;
            return block ?? undefined;
          } catch (error) {
            this.options.log.debug("diagnostics failed", { path, error });
            return undefined;
          } finally {
            finish();
          }
        },
        cancel: finish,
        note: () => note,
      };
    } catch (error) {
      release();
      this.options.log.debug("diagnostics skipped", { path, error });
      return undefined;
    }
  }

  private async baseline(entry: Entry, path: string, languageId: string, oldText: string | null): Promise<Diagnostic[] | null> {
    const settings = this.options.settings();
    const first = !entry.client.baselined;
    const timeoutMs = Math.round((first ? settings.baseline_timeout : settings.wait_timeout) * 1000);
    const deadline = Date.now() + timeoutMs;
    const work = (async (): Promise<Diagnostic[] | null> => {
      await entry.ready;
      if (oldText === null) return [];
      const doc = entry.client.document(path);
      if (entry.pull) {
        if (!doc || doc.text !== oldText) entry.client.sync(path, languageId, oldText);
        return entry.client.tsserverDiagnostics(path);
      }
      if (doc && doc.text === oldText && doc.diagnostics) return doc.diagnostics;
      const before = entry.client.sync(path, languageId, oldText);
      return entry.client.diagnosticsAfter(path, before, deadline - Date.now());
    })().catch(() => null);
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), timeoutMs)));
    const result = await Promise.race([work, timedOut]);
    clearTimeout(timer);
    if (result === "timeout" || result === null) {
      // Only the first baseline marks a server broken: later slow answers just skip one write.
      if (first && entry.client.state !== "stopped") this.markBroken(entry, `no baseline within ${timeoutMs} ms`);
      return null;
    }
    entry.client.baselined = true;
    return result;
  }

  private async afterWrite(
    entry: Entry,
    path: string,
    languageId: string,
    oldText: string | null,
    baseline: Diagnostic[] | null,
    signal?: AbortSignal,
  ): Promise<string | undefined | null> {
    if (!baseline || entry.client.state !== "ready") return null;
    const newText = await readFile(path, "utf8").catch(() => null);
    if (newText === null) return undefined;
    const settings = this.options.settings();
    entry.lastUsed = this.clock.now();
    const doc = entry.client.document(path);
    let after: Diagnostic[] | null;
    if (entry.pull) {
      if (!doc || doc.text !== newText) entry.client.sync(path, languageId, newText);
      after = await withTimeout(entry.client.tsserverDiagnostics(path), Math.round(settings.wait_timeout * 1000));
    } else if (doc && doc.text === newText && doc.diagnostics) after = doc.diagnostics;
    else {
      const before = entry.client.sync(path, languageId, newText);
      after = await entry.client.diagnosticsAfter(
        path,
        before,
        Math.round(settings.wait_timeout * 1000),
        settings.wait_mode === "settle" ? SETTLE_MS : 0,
        signal,
      );
    }
    if (!after) return null;
    const block = formatBlock(newErrors(baseline, after, lineMap(oldText ?? "", newText)));
    return block || undefined;
  }

  private entryFor(key: string, spec: ServerSpec, root: string, command: ResolvedCommand): Entry {
    const existing = this.entries.get(key);
    if (existing && (existing.client.state === "ready" || existing.client.state === "starting")) return existing;
    const settings = this.options.settings();
    const override = settings.servers?.[spec.id];
    const client = new LspClient({
      id: spec.id,
      root,
      command: command.command,
      env: { ...this.options.env(), ...(override?.env ?? {}) },
      initializationOptions: override?.initialization_options ?? spec.initializationOptions,
      log: this.options.log,
      onFailure: (reason) => this.markBroken(entry, reason),
    });
    // A command from the config may be another server for the same files: only the built-in
    // typescript-language-server is known to take tsserver requests.
    const pull = spec.diagnostics === "tsserver" && (command.source !== "config" || /typescript-language-server/.test(command.command.join(" ")));
    const entry: Entry = { key, client, command, lastUsed: this.clock.now(), ready: Promise.resolve(), pull };
    this.options.log.info("starting language server", { server: spec.id, root, command: command.command });
    entry.ready = client.start();
    entry.ready.catch((error) => this.markBroken(entry, error instanceof Error ? error.message : String(error)));
    this.entries.set(key, entry);
    return entry;
  }

  private markBroken(entry: Entry, reason: string): void {
    if (this.entries.get(entry.key) === entry) this.entries.delete(entry.key);
    if (this.closed || this.broken.has(entry.key)) return;
    this.broken.set(entry.key, { id: entry.client.id, root: entry.client.root, reason, since: Date.now() });
    this.options.log.warn("language server marked broken for this project", { server: entry.client.id, root: entry.client.root, reason });
    entry.client.markBroken(reason);
  }

  /** What is happening about a server that is not installed, as it is now (never claiming an install that is not running). */
  private missingHint(spec: ServerSpec): string {
    const strategy = this.options.settings().install_strategy;
    if (this.installer.inProgress.includes([...spec.packages].sort().join(" ")))
      return "is not installed yet: it is being installed into $AGENT_HOME/lsp now (agent lsp status); diagnostics come with the writes after that";
    if (strategy === "auto" && this.installFailed.has(spec.id))
      return `is not installed: its automatic install failed (see agent logs --component lsp); retry with agent lsp install ${spec.id}`;
    if (strategy === "auto") return `is not installed: the next write of such a file installs it into $AGENT_HOME/lsp (or now: agent lsp install ${spec.id})`;
    if (strategy === "manual") return `is not installed: install it with agent lsp install ${spec.id}`;
    return "is not installed, and lsp.install_strategy is off";
  }

  private autoInstall(spec: ServerSpec): void {
    if (this.options.settings().install_strategy !== "auto" || this.installFailed.has(spec.id)) return;
    if (this.installer.inProgress.includes([...spec.packages].sort().join(" "))) return;
    this.options.log.info("language server missing: installing it (lsp.install_strategy auto)", { server: spec.id, packages: spec.packages });
    this.installer.install(spec.packages).catch((error) => {
      this.installFailed.add(spec.id);
      this.options.log.error("automatic install failed", { server: spec.id, error });
    });
  }

  /** Writes to one file run their before/after steps one at a time. */
  private async lock(path: string): Promise<() => void> {
    const previous = this.locks.get(path) ?? Promise.resolve();
    let release!: () => void;
    const mine = new Promise<void>((r) => (release = r));
    const chained = previous.then(() => mine);
    this.locks.set(path, chained);
    await previous;
    return () => {
      release();
      if (this.locks.get(path) === chained) this.locks.delete(path);
    };
  }

  /** Look for idle servers every SWEEP_EVERY_MS of the manager's clock. */
  private armSweep(): void {
    if (this.closed) return;
    this.sweeper = this.clock.setTimeout(() => void this.stopIdle().finally(() => this.armSweep()), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  /** Stop servers unused for the idle time. */
  async stopIdle(): Promise<string[]> {
    const now = this.clock.now();
    const stopped: string[] = [];
    for (const entry of [...this.entries.values()]) {
      if (now - entry.lastUsed < this.idleMs) continue;
      this.entries.delete(entry.key);
      stopped.push(entry.client.id);
      this.options.log.info("stopping idle language server", { server: entry.client.id, root: entry.client.root });
      await entry.client.stop().catch(() => undefined);
    }
    return stopped;
  }

  status(): LspStatus {
    const s = this.options.settings();
    const now = this.clock.now();
    return {
      enabled: s.enabled,
      install_strategy: s.install_strategy,
      wait_mode: s.wait_mode,
      wait_timeout: s.wait_timeout,
      servers: [...this.entries.values()].map((e) => ({
        id: e.client.id,
        root: e.client.root,
        state: e.client.state,
        pid: e.client.pid,
        command: e.command.command,
        source: e.command.source,
        open_documents: e.client.openDocuments,
        idle_ms: Math.max(0, now - e.lastUsed),
      })),
      broken: [...this.broken.values()].map((b) => ({ id: b.id, root: b.root, reason: b.reason, since: new Date(b.since).toISOString() })),
      installing: this.installer.inProgress,
    };
  }

  list(): LspServerInfo[] {
    const s = this.options.settings();
    return SERVERS.map((spec) => {
      const override = s.servers?.[spec.id];
      const command = resolveCommand(spec, { override: override?.command, lspHome: this.options.lspHome, workspace: null, path: this.options.env().PATH });
      return {
        id: spec.id,
        name: spec.name,
        extensions: [...Object.keys(spec.languages), ...Object.keys(spec.fileNames ?? {})],
        packages: spec.packages,
        installed: command !== null,
        command: command?.command ?? null,
        source: command?.source ?? null,
        disabled: Boolean(override?.disabled),
      };
    });
  }

  which(rawPath: string): LspWhich {
    const path = resolve(rawPath);
    const r = this.route(path);
    return {
      path,
      server: r.spec?.id ?? null,
      language_id: r.languageId,
      matched_by: r.matchedBy,
      workspace: r.workspace,
      command: r.command?.command ?? null,
      source: r.command?.source ?? null,
      tier: r.skip ? "syntax" : "lsp",
      reason: r.skip ?? `served by ${r.spec!.id} (${r.matchedBy}) in workspace ${r.workspace}, command from ${r.command!.source} (${r.command!.detail})`,
    };
  }

  async install(id: string): Promise<LspInstallResult> {
    const spec = this.known(id);
    return this.installPackages([spec.id], spec.packages);
  }

  async installAll(): Promise<LspInstallResult> {
    return this.installPackages(
      SERVERS.map((s) => s.id),
      [...new Set(SERVERS.flatMap((s) => s.packages))],
    );
  }

  private async installPackages(ids: string[], packages: string[]): Promise<LspInstallResult> {
    if (this.options.settings().install_strategy === "off") {
      throw new AgentError(
        "lsp.install_disabled",
        "lsp.install_strategy is off: the daemon installs no language server (set it to manual or auto, or point lsp.servers.<id>.command at one)",
      );
    }
    const started = Date.now();
    await this.installer.install(packages);
    for (const id of ids) this.installFailed.delete(id);
    return { ids, packages, dir: this.options.lspHome, ms: Date.now() - started };
  }

  /** Stop the servers (all, or one id's) and clear their broken marks. */
  async restart(id?: string): Promise<LspRestartResult> {
    if (id !== undefined) this.known(id);
    const match = (serverId: string) => id === undefined || serverId === id;
    const cleared = [...this.broken.entries()].filter(([, b]) => match(b.id));
    for (const [key] of cleared) this.broken.delete(key);
    for (const known of SERVERS) if (match(known.id)) this.installFailed.delete(known.id);
    const stopping = [...this.entries.values()].filter((e) => match(e.client.id));
    for (const e of stopping) this.entries.delete(e.key);
    await Promise.all(stopping.map((e) => e.client.stop().catch(() => undefined)));
    return {
      stopped: stopping.map((e) => ({ id: e.client.id, root: e.client.root })),
      cleared: cleared.map(([, b]) => ({ id: b.id, root: b.root })),
    };
  }

  private known(id: string): ServerSpec {
    const spec = serverById(id);
    if (!spec) throw new AgentError("lsp.unknown_server", `unknown language server "${id}"; known: ${SERVERS.map((s) => s.id).join(", ")}`, { id });
    return spec;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.clock.clearTimeout(this.sweeper);
    const all = [...this.entries.values()];
    this.entries.clear();
    await Promise.all(all.map((e) => e.client.stop().catch(() => undefined)));
  }
}

/** The value, or null when it takes longer than `ms` (or fails). */
async function withTimeout<T>(work: Promise<T>, ms: number): Promise<T | null> {
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<null>((r) => (timer = setTimeout(() => r(null), ms)));
  try {
    return await Promise.race([work.catch(() => null), timedOut]);
  } finally {
    clearTimeout(timer);
  }
}
