import { lstatSync, mkdirSync, readdirSync, realpathSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "../../log/logger.js";
import type { ActorDefinition, ActorModuleStatus } from "../types.js";
import { isBuiltinActorName } from "../builtin-names.js";

/**
 * User actor modules: `$AGENT_HOME/actors/*.js|*.mjs`. Every export whose value has an `actions`
 * object is an actor named after the export (a default export is named after the file). The
 * folder is watched with chokidar and a changed file is imported again with a cache-busting
 * query; a module that fails to load is logged and reported, the others keep working.
 *
 * A file in that folder must not stop the daemon: only regular files (a symlink is followed and
 * its target judged by the same rules) of at most MODULE_MAX_BYTES are imported, and an import
 * that has not finished after the load time limit is reported as failed (a top-level await that
 * never settles). A symlink to /dev/zero, a FIFO, a huge file or a symlink loop is a module error.
 */
export interface DefinitionSink {
  registerDefinition(name: string, definition: ActorDefinition, source?: "builtin" | "user"): void;
  unregisterDefinition(name: string): void;
  hasDefinition(name: string): boolean;
  definitionSource?(name: string): "builtin" | "user" | undefined;
}

/** Where modules are imported when not in this thread (runner/user-runner.ts). */
export interface ModuleLoader {
  /** The module's actor definitions by name; rejects when the import fails or times out. */
  load(file: string, url: string, timeoutMs: number): Promise<Record<string, unknown>>;
  unload(file: string): void;
}

const MODULE_RE = /\.(m?js)$/;
/** The largest module file imported (bytes). */
export const MODULE_MAX_BYTES = 4 * 1024 * 1024;
/** How long an import may take before it is reported as failed. */
export const MODULE_LOAD_TIMEOUT_MS = 10_000;

/** Why `file` may not be imported, or null. Follows a symlink (a loop is an error). */
function refuseReason(file: string): string | null {
  let target = file;
  try {
    if (lstatSync(file).isSymbolicLink()) target = realpathSync(file);
    const st = statSync(target);
    if (!st.isFile()) return `${target === file ? "" : `its target ${target} `}is not a regular file`;
    if (st.size > MODULE_MAX_BYTES)
      return `${target === file ? "it" : `its target ${target}`} is ${st.size} bytes, more than the ${MODULE_MAX_BYTES} an actor module may have`;
    return null;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ELOOP") return "it is a symlink loop";
    if (code === "ENOENT" && target === file) return "it is a symlink to a file that does not exist";
    return (error as Error).message;
  }
}

function withTimeLimit<T>(p: Promise<T>, ms: number, file: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${basename(file)} did not finish loading within ${ms} ms`)), ms);
  });
  return Promise.race([p, limit]).finally(() => clearTimeout(timer));
}

export class UserModules {
  private readonly statuses = new Map<string, ActorModuleStatus>();
  private watcher: { close(): Promise<void> } | null = null;
  private version = 0;
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly mtimes = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();

  constructor(
    private readonly dir: string,
    private readonly sink: DefinitionSink,
    private readonly log: Logger,
    /** Called after a module was loaded, reloaded or removed. */
    private readonly onChange?: (statuses: ActorModuleStatus[]) => void,
    private readonly loadTimeoutMs = MODULE_LOAD_TIMEOUT_MS,
    /** Imports a module somewhere else (the runner's worker threads) instead of into this thread. */
    private readonly loader?: ModuleLoader,
  ) {}

  list(): ActorModuleStatus[] {
    return [...this.statuses.values()].sort((a, b) => a.file.localeCompare(b.file));
  }

  /** Load every module now, then watch the folder. */
  async start(watch = true): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    for (const name of readdirSync(this.dir).sort()) {
      if (MODULE_RE.test(name)) await this.load(join(this.dir, name));
    }
    if (watch) {
      const { watch: chokidarWatch } = await import("chokidar");
      const w = chokidarWatch(this.dir, { ignoreInitial: true, depth: 0, awaitWriteFinish: { stabilityThreshold: 60, pollInterval: 20 } });
      w.on("add", (f: string) => this.schedule(f));
      w.on("change", (f: string) => this.schedule(f));
      w.on("unlink", (f: string) => this.schedule(f));
      w.on("error", (error: unknown) => this.log.warn("actor module watcher error", { error }));
      await new Promise<void>((resolve) => w.once("ready", () => resolve()));
      this.watcher = w;
    }
  }

  async stop(): Promise<void> {
    for (const t of this.timers.values()) clearTimeout(t);
    await this.watcher?.close();
    this.watcher = null;
  }

  /** Reload a file now (also used by tests and `actors new`); resolves once it is registered. */
  reload(file: string): Promise<void> {
    this.chain = this.chain
      .then(() => this.load(file))
      .then(() => this.onChange?.(this.list()))
      .catch(() => undefined);
    return this.chain;
  }

  private schedule(file: string): void {
    if (!MODULE_RE.test(file)) return;
    const t = this.timers.get(file);
    if (t) clearTimeout(t);
    this.timers.set(
      file,
      setTimeout(() => {
        this.timers.delete(file);
        void this.reload(file);
      }, 30),
    );
  }

  private async load(file: string): Promise<void> {
    const previous = this.statuses.get(file)?.actors ?? [];
    let exists = true;
    let mtime = 0;
    try {
      mtime = lstatSync(file).mtimeMs;
    } catch {
      exists = false;
    }
    if (!exists) {
      for (const name of previous) this.dropIfOurs(name, file);
      this.loader?.unload(file);
      this.statuses.delete(file);
      this.mtimes.delete(file);
      this.log.info("actor module removed", { file, actors: previous });
      return;
    }
    // The watcher also reports a file that was just loaded (by `actors new`): skip unchanged files.
    if (this.mtimes.get(file) === mtime && this.statuses.get(file)?.ok) return;
    this.mtimes.set(file, mtime);
    let mod: Record<string, unknown>;
    try {
      const refused = refuseReason(file);
      if (refused) throw new Error(`${basename(file)} was not loaded: ${refused}`);
      const url = `${pathToFileURL(file).href}?v=${Math.trunc(mtime)}-${++this.version}`;
      mod = this.loader
        ? await this.loader.load(file, url, this.loadTimeoutMs)
        : ((await withTimeLimit(import(url), this.loadTimeoutMs, file)) as Record<string, unknown>);
    } catch (error) {
      // Keep the actors of the last good version of this file running.
      this.statuses.set(file, { file, ok: false, error: (error as Error)?.message ?? String(error), actors: previous, loadedAt: Date.now() });
      this.log.error("actor module failed to load", { file, error });
      return;
    }
    const found: Array<[string, Record<string, unknown>]> = [];
    for (const [exportName, value] of Object.entries(mod)) {
      if (!value || typeof value !== "object" || !("actions" in value)) continue;
      const actions = (value as { actions: unknown }).actions;
      if (!actions || typeof actions !== "object") continue;
      found.push([exportName === "default" ? basename(file).replace(MODULE_RE, "") : exportName, value as Record<string, unknown>]);
    }
    const errors: string[] = [];
    const names: string[] = [];
    for (const [name, def] of found) {
      if (isBuiltinActorName(name) || (this.sink.hasDefinition(name) && this.sink.definitionSource?.(name) === "builtin")) {
        errors.push(`${name} is a built-in actor name`);
        continue;
      }
      const owner = this.ownerOf(name);
      if (owner && owner !== file) {
        errors.push(`${name} is already defined by ${basename(owner)}`);
        continue;
      }
      this.sink.registerDefinition(name, def as unknown as ActorDefinition, "user");
      names.push(name);
    }
    for (const name of previous) if (!names.includes(name)) this.dropIfOurs(name, file);
    this.statuses.set(file, { file, ok: errors.length === 0, ...(errors.length ? { error: errors.join("; ") } : {}), actors: names, loadedAt: Date.now() });
    this.log.info("actor module loaded", { file, actors: names, ...(errors.length ? { errors } : {}) });
  }

  private ownerOf(name: string): string | undefined {
    for (const s of this.statuses.values()) if (s.actors.includes(name)) return s.file;
    return undefined;
  }

  private dropIfOurs(name: string, file: string): void {
    if (this.ownerOf(name) === file && this.sink.definitionSource?.(name) !== "builtin") this.sink.unregisterDefinition(name);
  }
}
