/**
 * The runner `default`: user actor modules, each in its own worker thread (module-runner.ts).
 * Loading a file starts a worker for it and turns its exports into definitions whose code runs
 * there; loading a changed file starts a new worker, and the previous one ends once its last
 * actor has gone to sleep (the runtime puts the actors of a replaced definition to sleep).
 */
import { ModuleRunner, RUNNER_DEFAULTS, type RunnerHost, type RunnerLimits } from "./module-runner.js";
import { remoteDefinition } from "./remote-definition.js";
import type { ActorDefinition } from "../types.js";

export const DEFAULT_RUNNER = "default";

export class UserRunner {
  private readonly modules = new Map<string, ModuleRunner>();
  private host: RunnerHost | null = null;

  constructor(private readonly limits: RunnerLimits = RUNNER_DEFAULTS) {}

  /** The runtime side (set once the runtime exists; modules load before it starts). */
  bind(host: RunnerHost): void {
    this.host = host;
  }

  /** Import `file` (as `url`) in a new worker: its actor exports, as definitions. */
  async load(file: string, url: string, loadTimeoutMs?: number): Promise<Record<string, ActorDefinition>> {
    if (!this.host) throw new Error("the user runner has no runtime");
    const runner = new ModuleRunner(file, url, this.host, { ...this.limits, ...(loadTimeoutMs ? { loadTimeoutMs } : {}) });
    const shapes = await runner.load();
    this.modules.get(file)?.retire();
    this.modules.set(file, runner);
    // A module without actors (a helper) keeps no thread.
    if (shapes.length === 0) runner.retire();
    const defs: Record<string, ActorDefinition> = {};
    for (const shape of shapes) defs[shape.name] = remoteDefinition(runner, shape);
    return defs;
  }

  /** The file is gone: its worker ends once its actors sleep. */
  unload(file: string): void {
    this.modules.get(file)?.retire();
    this.modules.delete(file);
  }

  async stop(): Promise<void> {
    await Promise.allSettled([...this.modules.values()].map((m) => m.terminate()));
    this.modules.clear();
  }
}
