/**
 * The actor runtime (ActorRuntime): the facade the gateway, the RPC handlers and the agent
 * runtime call, and the host of every instance (InstanceHost). It holds the definitions and the
 * index, decides what creating, waking, sleeping, destroying and crashing do, and composes the
 * focused parts: awake instances and their transitions (awake-actors.ts), calls
 * (actor-calls.ts), records (actor-records.ts), crash supervision (crash-supervisor.ts), alarms
 * (alarm-timers.ts) and queue replies (queue-replies.ts); the actors' files are in ../storage/,
 * one awake actor in ../instance/, the workflow engine in ../workflow/, traces and c.log lines
 * in ../observe/.
 */
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { type Clock, systemClock } from "../../../shared/clock.js";
import { parseActorKey } from "../../../shared/actor-key.js";
import { AgentError } from "../../../shared/errors.js";
import { silentLogger, type Logger } from "../../log/logger.js";
import type { DocStore } from "../../store/doc-store.js";
import { invokeAction, invokeRequest } from "./actor-calls.js";
import type { ActorFile } from "../storage/actor-file.js";
import { ActorLogs, type ActorLogLine } from "../observe/actor-logs.js";
import { isBuiltinActorName } from "../builtin-names.js";
import { allActors, encodeActorInput, listActors, listActorsPage, newActorId, newActorRecord, validateCreateRequest } from "./actor-records.js";
import { FileJournal } from "../storage/file-journal.js";
import { actorFileText, actorKvDir, openActorFile, removeActorFiles } from "../storage/actor-storage.js";
import { AlarmTimers } from "./alarm-timers.js";
import { IdleAwakeCap, idleEnough } from "./idle-awake-cap.js";
import { AwakeActors } from "./awake-actors.js";
import { afterCrash, CRASH_DEFAULTS, CrashSupervisor } from "./crash-supervisor.js";
import { actorNotFound, errorSummary } from "../errors.js";
import { ActorIndex } from "../storage/index-store.js";
import { ActorInstance, type InstanceHost } from "../instance/instance.js";
import { ACTOR_LIMITS } from "../instance/limits.js";
import { BucketedKv, toKeyBytes } from "../storage/kv.js";
import { createInspector } from "./inspector.js";
import { QueueReplies } from "./queue-replies.js";
import { TraceStore } from "../storage/trace-store.js";
import { indexDir, prepareActorLayout } from "../storage/layout.js";
import type {
  ActorDefinition,
  ActorInspector,
  ActorModuleStatus,
  ActorRecord,
  ActorRuntime,
  CreateActorRequest,
  InvokeOptions,
  ListActorsQuery,
} from "../types.js";
import { runWorkflow } from "../workflow/engine.js";
import type { RunnerConnections, RunnerHost } from "../runner/module-runner.js";
import { type ActorConn, CALL_TRANSPORT, type ConnTransport, type ConnType, holdMessages } from "../instance/connections.js";
import type { RawWebSocket } from "../types.js";
import { toCallerError } from "../errors.js";

export { CRASH_DEFAULTS } from "./crash-supervisor.js";
export { newActorId, stateName } from "./actor-records.js";
export type { ActorLogLine } from "../observe/actor-logs.js";

/**
 * Mass transitions (boot wakes, a graceful stop, a sleep storm) run this many actors at a time,
 * the event loop running between batches, so calls to other actors are served meanwhile.
 */
const TRANSITION_BATCH = 64;
/**
 * Sleeps asked for (idle timers, c.sleep()) in progress at most. A storm (10k idle timers
 * firing together) then costs every event-loop turn the work of a bounded number of actors:
 * starting 64 a turn regardless of how many are still on their way would let the later steps of
 * thousands of sleeps (trace saves, index lines, their promises) pile up in the same turns.
 */
const SLEEPS_IN_PROGRESS = 64;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

export interface RuntimeOptions {
  /** `$AGENT_HOME/data/actors`. */
  dataDir: string;
  log?: Logger;
  /** Where c.log lines go (besides the per-actor ring); default: `log`. */
  actorLog?: Logger;
  /** Crash-loop breaker and backoff (tests shorten them). */
  crash?: { maxCrashes?: number; windowMs?: number; backoffBaseMs?: number; backoffMaxMs?: number };
  /** Spans kept per actor. */
  traceCapacity?: number;
  /** c.log lines kept per actor for `agent actors logs`. */
  logCapacity?: number;
  moduleStatuses?: () => ActorModuleStatus[];
  /** The JSON-lines file `actorLog` writes to: `logs()` reads it after a restart. */
  actorLogFile?: string;
  /** Wake the actors of the last run once `daemonReady()` is called (at most 5 s later), not right after `start`. */
  bootWakesAfterReady?: boolean;
  /** Alarms and `c.schedule.after` read the time from it; default the system clock (tests move a ManualClock). */
  clock?: Clock;
  /** Idle actors kept awake at most before the longest-awake sleep early (idle-awake-cap.ts); 0: no cap. Default ACTOR_LIMITS.maxIdleAwake. */
  maxIdleAwake?: number;
}

type ChangeEvent = { type: "record" | "state" | "broadcast"; actorId: string; record?: ActorRecord; event?: string; args?: unknown[] };

export class ActorRuntimeImpl implements ActorRuntime, InstanceHost {
  private readonly defs = new Map<string, { def: ActorDefinition; source: "builtin" | "user" }>();
  private index!: ActorIndex;
  /** The journal of small actor files (file-journal.ts), open while started. */
  files!: FileJournal;
  private readonly awake = new AwakeActors();
  /** `awake.live`, under a short name: the hot path reads it. */
  private readonly live = this.awake.live;
  private readonly creating = new Map<string, Promise<ActorRecord>>();
  private readonly destroying = new Map<string, Promise<ActorRecord>>();
  private readonly alarms: AlarmTimers;
  private readonly supervisor: CrashSupervisor;
  private readonly traceStore: TraceStore;
  private readonly actorLogs: ActorLogs;
  private readonly queueReplies = new QueueReplies();
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  /** Actors to wake once their definition is registered (boot before a feature registered it). */
  private readonly wakeWhenDefined = new Map<string, Set<string>>();
  private readonly logger: Logger;
  private started = false;
  private stopped = false;
  /** Actors that asked to sleep (idle timers, c.sleep()), put to sleep in batches. */
  private readonly sleepQueue = new Set<string>();
  private sleepDrainScheduled = false;
  /** Sleeps from `sleepQueue` in progress (at most SLEEPS_IN_PROGRESS). */
  private sleepsInProgress = 0;
  private readonly idleCap: IdleAwakeCap;
  /** Sleeps in `sleepQueue` asked by the idle cap: dropped at the drain if the actor is no longer idle. */
  private readonly earlySleeps = new Set<string>();
  /** The boot wakes in progress (stop waits for them to end). */
  private bootWakes: Promise<void> | null = null;

  private readonly clock: Clock;

  constructor(private readonly options: RuntimeOptions) {
    this.clock = options.clock ?? systemClock;
    this.logger = options.log ?? silentLogger;
    this.actorLogs = new ActorLogs(options.actorLog ?? this.logger, options.logCapacity, options.actorLogFile);
    this.supervisor = new CrashSupervisor({ ...CRASH_DEFAULTS, ...options.crash });
    this.traceStore = new TraceStore(() => this.files, options.traceCapacity, this.logger);
    this.idleCap = new IdleAwakeCap(this.live, options.maxIdleAwake ?? ACTOR_LIMITS.maxIdleAwake, this.sleepQueue, (id) => {
      this.earlySleeps.add(id);
      this.enqueueSleep(id);
    });
    this.alarms = new AlarmTimers(
      (id) => this.alarmDue(id),
      () => this.stopped,
      this.clock,
    );
  }

  // ---------- definitions ----------

  registerDefinition(name: string, definition: ActorDefinition, source: "builtin" | "user" = "builtin"): void {
    if (!definition || typeof definition !== "object" || !definition.actions || typeof definition.actions !== "object") {
      throw new AgentError("api.bad_request", `actor definition ${name} has no actions object`);
    }
    if (source === "user" && isBuiltinActorName(name)) throw new AgentError("actor.reserved_name", `${name} is a built-in actor name`, { name });
    const previous = this.defs.get(name);
    this.defs.set(name, { def: definition, source });
    // Running actors of a replaced definition sleep; the next call wakes them with the new one.
    if (previous && previous.def !== definition) this.sleepAllOf(name);
    const pending = this.wakeWhenDefined.get(name);
    if (pending && this.started) {
      this.wakeWhenDefined.delete(name);
      for (const id of pending) this.wakeInBackground(id, "definition registered");
    }
  }

  unregisterDefinition(name: string): void {
    if (!this.defs.delete(name)) return;
    this.sleepAllOf(name);
  }

  private sleepAllOf(name: string): void {
    for (const inst of this.live.values()) if (inst.record.name === name) this.requestSleep(inst.id);
  }

  /** The awake actors of the definition `name`. */
  awakeOf(name: string): string[] {
    const ids: string[] = [];
    for (const inst of this.live.values()) if (inst.record.name === name) ids.push(inst.id);
    return ids;
  }

  definitionNames(): string[] {
    return [...this.defs.keys()].sort();
  }

  hasDefinition(name: string): boolean {
    return this.defs.has(name);
  }

  definitionSource(name: string): "builtin" | "user" | undefined {
    return this.defs.get(name)?.source;
  }

  moduleStatuses(): ActorModuleStatus[] {
    return this.options.moduleStatuses?.() ?? [];
  }

  // ---------- lifecycle of the runtime ----------

  async start(): Promise<void> {
    const moved = prepareActorLayout(this.options.dataDir);
    if (moved) this.logger.info("actor files moved into shard folders", { entries: moved });
    this.files = FileJournal.open(this.options.dataDir);
    this.index = await ActorIndex.open(join(indexDir(this.options.dataDir), "index.json"), this.options.dataDir);
    this.started = true;
    const boot = new Set(this.index.restartOnBoot);
    // Running (or waiting to be restarted after a crash) when the daemon went away, or awake at
    // a graceful stop: known without loading every record.
    const toWake = this.index.toWakeAtBoot();
    for (const [id, at] of Object.entries(this.index.alarms())) this.alarms.arm(id, at);
    // Woken after start returns (the daemon reports ready meanwhile), in batches; the boot list
    // is cleared once they all started, so a crash before that wakes them again.
    if (toWake.length || boot.size) this.bootWakes = this.wakeAtBoot(toWake, boot.size > 0);
  }

  private readyCalled: (() => void) | null = null;

  daemonReady(): void {
    this.readyCalled?.();
    // The records and the file journal are read once the daemon answers (a call needing them
    // first loads them then).
    void this.files?.startLoading();
    void this.index?.loadInBackground().catch((error) => this.logger.error("loading the actor index failed", { error }));
  }

  private async wakeAtBoot(ids: string[], clearBootList: boolean): Promise<void> {
    if (this.options.bootWakesAfterReady) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 5000);
        this.readyCalled = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.readyCalled = null;
    }
    await nextTurn();
    for (let i = 0; i < ids.length && !this.stopped; i += TRANSITION_BATCH) {
      await Promise.allSettled(ids.slice(i, i + TRANSITION_BATCH).map((id) => this.wakeInBackground(id, "boot")));
      await nextTurn();
    }
    if (clearBootList && !this.stopped) await this.index.setRestartOnBoot([]).catch((error) => this.logger.error("clearing the boot list failed", { error }));
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    this.idleCap.stop();
    this.alarms.stopAll();
    this.supervisor.cancelAllRestarts();
    this.readyCalled?.();
    await this.bootWakes;
    const starts = this.awake.startsInProgress();
    if (starts.length) await Promise.allSettled(starts);
    const awake = [...this.live.keys()];
    this.onStopProgress?.(0, awake.length);
    for (let i = 0; i < awake.length; i += TRANSITION_BATCH) {
      await Promise.allSettled(awake.slice(i, i + TRANSITION_BATCH).map((id) => this.sleep(id)));
      this.onStopProgress?.(Math.min(awake.length, i + TRANSITION_BATCH), awake.length);
    }
    await Promise.allSettled(this.awake.stopsInProgress());
    this.traceStore.close();
    await this.index.setRestartOnBoot(awake);
    await this.index.close();
    await this.files.close();
    this.alarms.clear();
  }

  /** Told how many awake actors a graceful stop has put to sleep (the daemon reports it). */
  onStopProgress: ((done: number, total: number) => void) | null = null;

  onChange(listener: (e: ChangeEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(e: ChangeEvent): void {
    for (const l of this.listeners) {
      try {
        l(e);
      } catch (error) {
        this.logger.error("actor change listener threw", { error });
      }
    }
  }

  private emitRecord(rec: ActorRecord): void {
    if (this.listeners.size) this.emit({ type: "record", actorId: rec.actor_id, record: { ...rec } });
  }

  // ---------- records ----------

  async getOrCreate(req: CreateActorRequest & { key: string }): Promise<{ actor: ActorRecord; created: boolean }> {
    validateCreateRequest(req, (name) => this.defs.has(name));
    const { record, created } = await this.createUnique(req, req.key);
    return { actor: { ...record }, created };
  }

  async create(req: CreateActorRequest): Promise<ActorRecord> {
    validateCreateRequest(req, (name) => this.defs.has(name));
    const key = req.key ?? randomUUID();
    const { record, created } = await this.createUnique(req, key);
    if (!created) {
      throw new AgentError("actor.duplicate_key", `an actor ${req.name} with key ${JSON.stringify(key)} already exists`, {
        existing_actor_id: record.actor_id,
      });
    }
    return { ...record };
  }

  /**
   * The live actor with this (namespace, name, key), or a new one. One creation per key runs at
   * a time: a request that finds one in progress waits for it and looks again, so concurrent
   * requests never create two actors with the same key.
   */
  private async createUnique(req: CreateActorRequest, key: string): Promise<{ record: ActorRecord; created: boolean }> {
    const k = `${req.namespace}\u0000${req.name}\u0000${key}`;
    for (;;) {
      const existing = this.index.findLive(req.namespace, req.name, key);
      if (existing) return { record: existing, created: false };
      const pending = this.creating.get(k);
      if (!pending) break;
      await pending.catch(() => undefined);
    }
    const p = this.doCreate(req, key);
    this.creating.set(k, p);
    try {
      return { record: await p, created: true };
    } finally {
      this.creating.delete(k);
    }
  }

  private async doCreate(req: CreateActorRequest, key: string): Promise<ActorRecord> {
    const input = encodeActorInput(req.input);
    let id = newActorId();
    while (this.index.get(id)) id = newActorId();
    const rec = newActorRecord(id, req, key);
    // The actor file first, so the index never points at a missing file (a line of the journal
    // of small files, appended with the other writes of this turn).
    const doc = await this.openFile(rec, input, true);
    await this.files.write(`${id}.json`, () => actorFileText(doc.data));
    // Created when it enters the index: listings (in index order, newest first) then agree with create_ts.
    rec.create_ts = Math.max(rec.create_ts, Date.now());
    await this.index.add(rec);
    this.emitRecord(rec);
    if (rec.runner_name_selector === "default") {
      this.traceStore.fresh(id);
      try {
        await this.wake(id, doc, false);
      } catch (error) {
        this.logger.warn("a new actor failed to start", { actor_id: id, name: rec.name, error: errorSummary(error) });
      }
    }
    return rec;
  }

  private openFile(rec: ActorRecord, input: string | null, created = false): Promise<DocStore<ActorFile>> {
    return openActorFile(this.options.dataDir, this.files, rec, input, created);
  }

  list(q: ListActorsQuery): ActorRecord[] {
    return listActors(this.index, q);
  }

  listPage(q: ListActorsQuery & { name: string; limit: number }): { actors: ActorRecord[]; cursor: string | null } {
    return listActorsPage(this.index, q);
  }

  /** Actors in the index (destroyed ones too) and awake now. */
  counts(): { actors: number; awake: number } {
    return { actors: this.index.size, awake: this.live.size };
  }

  /** Every live actor (for `agent actors list` without a name), newest first. */
  all(namespace?: string): ActorRecord[] {
    return allActors(this.index, namespace);
  }

  get(actorId: string): ActorRecord | undefined {
    const r = this.index.get(actorId);
    return r ? { ...r } : undefined;
  }

  private liveRecord(actorId: string): ActorRecord {
    const r = this.index.get(actorId);
    if (!r || r.destroy_ts !== null) throw actorNotFound(actorId);
    return r;
  }

  // ---------- waking and sleeping ----------

  async ensureAwake(actorId: string): Promise<void> {
    await this.instance(actorId);
  }

  /** The awake instance (waking it). Fast path: no await when it is awake. */
  private instance(actorId: string): Promise<ActorInstance> | ActorInstance {
    const inst = this.live.get(actorId);
    if (inst !== undefined && inst.status === "awake") return inst;
    return this.wake(actorId);
  }

  /**
   * The awake instance for a call. `forCall` false (creation, waking in the background): the
   * instance a start brings even when its hooks called `c.destroy()`.
   */
  private wake(actorId: string, openedDoc?: DocStore<ActorFile>, forCall = true): Promise<ActorInstance> {
    // Being destroyed (`c.destroy()` included): no call reaches it any more; once destroyed it is not found.
    const destroying = this.destroying.get(actorId);
    if (destroying) return this.afterDestroy(destroying, actorId, openedDoc);
    const started = this.awake.wake(actorId, () => this.startActor(actorId, openedDoc));
    if (!forCall) return started;
    // `c.destroy()` in onCreate/onWake: the start finishes, then the actor is destroyed, and the
    // calls that waited for that start do not reach it (actor.not_found, as in RivetKit 2.2.1).
    return started.then((inst) => {
      const during = this.destroying.get(actorId);
      return during ? this.afterDestroy(during, actorId, openedDoc) : inst;
    });
  }

  private afterDestroy(destroying: Promise<ActorRecord>, actorId: string, openedDoc?: DocStore<ActorFile>): Promise<ActorInstance> {
    return destroying.then(
      () => Promise.reject(actorNotFound(actorId)),
      () => this.wake(actorId, openedDoc),
    );
  }

  /** Start an actor that is not awake: it must be live, served by this runner, and its definition loaded. */
  private startActor(actorId: string, openedDoc?: DocStore<ActorFile>): Promise<ActorInstance> {
    if (this.stopped) throw new AgentError("daemon.stopping", "the actor runtime is stopping");
    const rec = this.liveRecord(actorId);
    if (rec.runner_name_selector !== "default") {
      throw new AgentError("actor.runner_unavailable", `no runner named ${rec.runner_name_selector} serves this actor`, {
        runner_name_selector: rec.runner_name_selector,
      });
    }
    const entry = this.defs.get(rec.name);
    if (!entry) throw new AgentError("actor.name_not_found", `no actor definition named ${rec.name} is loaded`, { name: rec.name });
    return this.startInstance(rec, entry.def, openedDoc);
  }

  private async startInstance(rec: ActorRecord, def: ActorDefinition, openedDoc?: DocStore<ActorFile>): Promise<ActorInstance> {
    const doc = openedDoc ?? (await this.openFile(rec, null));
    const inst = new ActorInstance(
      rec,
      def,
      doc,
      new BucketedKv(actorKvDir(this.options.dataDir, rec.actor_id)),
      this.traceStore.ring(rec.actor_id),
      parseActorKey(rec.key),
      this,
      this.defs.get(rec.name)?.source === "user",
    );
    try {
      await inst.start();
    } catch (error) {
      inst.status = "stopped";
      inst.abort.abort();
      inst.release();
      this.crashed(rec.actor_id, error, "start");
      const e = errorSummary(error);
      throw new AgentError("actor.crashed", `actor ${rec.actor_id} crashed while starting: ${e.message}`, { actor_id: rec.actor_id });
    }
    const now = Date.now();
    rec.start_ts = now;
    rec.connectable_ts = now;
    rec.sleep_ts = null;
    rec.error = null;
    this.live.set(rec.actor_id, inst);
    await this.index.update(rec);
    this.emitRecord(rec);
    inst.afterStart();
    this.runDue(inst);
    this.idleCap.woke();
    return inst;
  }

  /** Wake an actor, logging a failure; resolves when it settled. */
  private wakeInBackground(actorId: string, why: string): Promise<void> {
    const rec = this.index.get(actorId);
    if (!rec || rec.destroy_ts !== null || this.stopped) return Promise.resolve();
    if (!this.defs.has(rec.name)) {
      let set = this.wakeWhenDefined.get(rec.name);
      if (!set) this.wakeWhenDefined.set(rec.name, (set = new Set()));
      set.add(actorId);
      return Promise.resolve();
    }
    return this.wake(actorId, undefined, false).then(
      () => undefined,
      (error) => this.logger.warn("could not wake actor", { actor_id: actorId, why, error: errorSummary(error) }),
    );
  }

  /** Put an awake actor to sleep (persisting state). */
  sleep(actorId: string): Promise<void> {
    const existing = this.awake.stopInProgress(actorId);
    if (existing) return existing;
    const inst = this.live.get(actorId);
    if (!inst) return Promise.resolve();
    const stop = (async () => {
      this.live.delete(actorId);
      await inst.stop("sleep");
      await this.traceStore.save(actorId);
      this.traceStore.release(actorId);
      const rec = this.index.get(actorId);
      if (rec && rec.destroy_ts === null) {
        rec.sleep_ts = Date.now();
        rec.connectable_ts = null;
        await this.index.update(rec);
        this.emitRecord(rec);
      }
    })();
    return this.awake.trackStop(actorId, stop);
  }

  destroy(actorId: string): Promise<ActorRecord> {
    const pending = this.destroying.get(actorId);
    if (pending) return pending;
    const p = this.doDestroy(actorId).finally(() => this.destroying.delete(actorId));
    this.destroying.set(actorId, p);
    return p;
  }

  private async doDestroy(actorId: string): Promise<ActorRecord> {
    const rec = this.liveRecord(actorId);
    const stopping = this.awake.stopInProgress(actorId);
    if (stopping) await stopping;
    let inst = this.live.get(actorId);
    if (!inst && this.defs.has(rec.name) && rec.runner_name_selector === "default") {
      // Wake it so onDestroy runs; a definition that no longer starts is destroyed without it.
      inst = await this.awake.wake(actorId, () => this.startActor(actorId)).catch(() => undefined);
    }
    if (rec.destroy_ts !== null) return { ...rec };
    this.supervisor.cancelRestart(actorId);
    if (inst) {
      this.live.delete(actorId);
      await this.awake.trackStop(actorId, inst.stop("destroy"));
    }
    rec.destroy_ts = Date.now();
    rec.connectable_ts = null;
    this.alarms.disarm(actorId);
    await this.index.markDestroyed(rec);
    await removeActorFiles(this.options.dataDir, this.files, actorId);
    this.traceStore.forget(actorId);
    this.supervisor.forget(actorId);
    this.emitRecord(rec);
    return { ...rec };
  }

  // ---------- calls ----------

  async action(actorId: string, name: string, args: unknown[], options?: InvokeOptions): Promise<unknown> {
    let inst = this.live.get(actorId);
    if (inst === undefined || inst.status !== "awake") inst = await this.wake(actorId);
    const i = inst;
    // A stateless HTTP call is a connection for its length, as RivetKit's (when the actor has connection hooks).
    if (options?.request !== undefined && options.conn === undefined && i.hasConnectionHooks)
      return i.asActor(() => this.asConnection(i, "http", options, (conn) => invokeAction(i, name, args, { ...options, conn }, this.logger)));
    return i.asActor(() => invokeAction(i, name, args, options, this.logger));
  }

  async request(actorId: string, request: Request, options?: InvokeOptions): Promise<Response> {
    const inst = await this.instance(actorId);
    // A raw request is a connection for its length, as RivetKit's: onBeforeConnect may refuse it.
    if (inst.hasConnectionHooks)
      return inst.asActor(() =>
        this.asConnection(inst, "raw-request", { ...options, request: () => request }, (conn) =>
          invokeRequest(inst, request, { ...options, conn }, this.logger),
        ),
      );
    return inst.asActor(() => invokeRequest(inst, request, options, this.logger));
  }

  /** Run `fn` with a connection that lives for one HTTP call: connect hooks before, onDisconnect after. */
  private async asConnection<T>(inst: ActorInstance, type: ConnType, options: InvokeOptions, fn: (conn: ActorConn) => Promise<T>): Promise<T> {
    let conn: ActorConn;
    try {
      conn = await inst.connect(options.connParams, CALL_TRANSPORT, { type, ...(options.request ? { request: options.request() } : {}) });
    } catch (error) {
      throw toCallerError(error, this.logger, { actor_id: inst.id, hook: "connect" });
    }
    try {
      return await fn(conn);
    } finally {
      await inst.disconnect(conn);
    }
  }

  async enqueue(
    actorId: string,
    name: string,
    body: unknown,
    options?: { wait?: boolean; timeoutMs?: number },
  ): Promise<{ status: "completed" | "timedOut"; response?: unknown; id: number }> {
    if (typeof name !== "string" || !name) throw new AgentError("api.bad_request", "a queue message needs a name");
    const inst = await this.instance(actorId);
    if (!options?.wait) {
      const id = await inst.queue.enqueue(name, body);
      return { status: "completed", id };
    }
    // Register the waiter before the consumer can complete the message.
    const expectedId = inst.queue.nextId;
    const reply = this.queueReplies.wait(actorId, expectedId, options.timeoutMs ?? ACTOR_LIMITS.actionTimeoutMs);
    let id: number;
    try {
      id = await inst.queue.enqueue(name, body);
    } catch (error) {
      this.queueReplies.abandon(actorId, expectedId);
      throw error;
    }
    return { ...(await reply), id };
  }

  async kvGet(actorId: string, key: Uint8Array): Promise<Uint8Array | null> {
    this.liveRecord(actorId);
    const inst = this.live.get(actorId);
    if (inst) return inst.kv.get(key);
    return BucketedKv.readOnce(actorKvDir(this.options.dataDir, actorId), toKeyBytes(key));
  }

  // ---------- InstanceHost ----------

  /** The c.log lines of an actor (newest last): this run's ring, else the log file's lines. */
  logs(actorId: string, limit = 200): ActorLogLine[] {
    if (!this.index.get(actorId)) throw actorNotFound(actorId);
    return this.actorLogs.lines(actorId, limit);
  }

  actorLog(actorId: string, level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void {
    this.actorLogs.add(actorId, this.index?.get(actorId)?.name, level, msg, fields);
  }

  writeFailed(actorId: string, error: unknown): void {
    const message = "writing the actor file failed: the actor is back at its last saved state and goes to sleep";
    this.logger.error(message, { actor_id: actorId, error: errorSummary(error) });
    this.actorLog(actorId, "error", message, { error: errorSummary(error) });
    // At once, not in a setImmediate: a call arriving meanwhile must not reach the failed instance.
    void this.sleep(actorId).catch((e) => this.logger.error("sleep failed", { actor_id: actorId, error: e }));
  }

  broadcast(actorId: string, event: string, args: unknown[]): void {
    this.live.get(actorId)?.conns.broadcast(event, args);
    if (this.listeners.size) this.emit({ type: "broadcast", actorId, event, args });
  }

  // ---------- connections ----------

  async connect(actorId: string, params: unknown, transport: ConnTransport, request?: Request): Promise<ActorConn> {
    const inst = await this.instance(actorId);
    try {
      return await inst.asActor(() => inst.connect(params, transport, request ? { request } : undefined));
    } catch (error) {
      throw toCallerError(error, this.logger, { actor_id: actorId, hook: "connect" });
    }
  }

  async disconnect(actorId: string, conn: ActorConn): Promise<void> {
    const inst = this.live.get(actorId);
    if (inst) await inst.asActor(() => inst.disconnect(conn));
  }

  async openWebSocket(actorId: string, request: Request, socket: RawWebSocket, params?: unknown): Promise<void> {
    const websocket = holdMessages(socket);
    let conn: ActorConn | null = null;
    let closed = false;
    let inst: ActorInstance | null = null;
    // On the socket itself: the disconnect is at once, not held for the handler (holdMessages).
    socket.on("close", () => {
      closed = true;
      const i = inst;
      if (conn && i) void i.asActor(() => i.disconnect(conn!));
    });
    inst = await this.instance(actorId);
    const handler = inst.def.onWebSocket;
    if (!handler) throw new AgentError("handler.websocket_not_defined", `actor ${inst.record.name} has no onWebSocket handler`);
    // As RivetKit's: the socket is a connection (onBeforeConnect may refuse it; onConnect, onDisconnect).
    try {
      conn = await inst.asActor(() =>
        inst.connect(params, { event: () => undefined, close: (code, reason) => websocket.close(code, reason) }, { type: "raw-websocket", request }),
      );
    } catch (error) {
      throw toCallerError(error, this.logger, { actor_id: actorId, hook: "connect" });
    }
    const c = conn;
    const live = inst;
    // Closed by the client while the hooks ran: the handler still runs (the client saw the socket
    // open) and hears the close after what was sent before it; the connection ends after it.
    try {
      await live.asActor(() => live.span("hook", "onWebSocket", () => handler(live.connContext(c.view, request), websocket, { request })));
    } catch (error) {
      void live.asActor(() => live.disconnect(c));
      throw toCallerError(error, this.logger, { actor_id: actorId, handler: "onWebSocket" });
    }
    if (closed) await live.asActor(() => live.disconnect(c));
  }

  requestSleep(actorId: string): void {
    // Asked for by the actor (c.sleep()), its idle timer or a reload: no longer only the cap's.
    this.earlySleeps.delete(actorId);
    this.enqueueSleep(actorId);
  }

  private enqueueSleep(actorId: string): void {
    this.sleepQueue.add(actorId);
    this.scheduleSleeps();
  }

  private scheduleSleeps(): void {
    if (this.sleepDrainScheduled || this.sleepQueue.size === 0 || this.sleepsInProgress >= SLEEPS_IN_PROGRESS) return;
    this.sleepDrainScheduled = true;
    setImmediate(() => this.drainSleeps());
  }

  /**
   * Sleep the actors that asked, at most SLEEPS_IN_PROGRESS at a time, the next ones starting
   * (in a later turn) as others end, so a storm is spread over many turns and calls to other
   * actors are served between them. An actor busy with a call waits for it before its sleep
   * does anything: it takes no place (it must not hold up the others).
   */
  private drainSleeps(): void {
    this.sleepDrainScheduled = false;
    for (const id of this.sleepQueue) {
      if (this.sleepsInProgress >= SLEEPS_IN_PROGRESS) break;
      this.sleepQueue.delete(id);
      const inst = this.live.get(id);
      // An early sleep (the idle cap's) of an actor that got a call or a connection since it was chosen: it stays awake.
      if (this.earlySleeps.delete(id) && inst && !idleEnough(inst, Date.now())) continue;
      const sleep = this.sleep(id).catch((error) => this.logger.error("sleep failed", { actor_id: id, error }));
      if (inst && (inst.inFlight > 0 || inst.activeSteps > 0)) continue;
      this.sleepsInProgress++;
      void sleep.then(() => {
        this.sleepsInProgress--;
        this.scheduleSleeps();
      });
    }
  }

  requestDestroy(actorId: string): void {
    // At once, not in a later turn: from here on no new call reaches the actor (`wake`), so after the
    // answer of the action that called `c.destroy()` the actor is gone. onDestroy runs while calls
    // already in flight finish (as RivetKit's), so one answered after it sees its change.
    void this.destroy(actorId).catch((error) => this.logger.error("destroy failed", { actor_id: actorId, error }));
  }

  stateChanged(actorId: string): void {
    if (this.listeners.size) this.emit({ type: "state", actorId });
  }

  queueCompleted(actorId: string, messageId: number, reply: unknown): void {
    this.queueReplies.complete(actorId, messageId, reply);
  }

  invokeScheduled(actorId: string, action: string, args: unknown[]): Promise<unknown> {
    return this.action(actorId, action, args, { source: "schedule" });
  }

  async runWorkflow(inst: ActorInstance): Promise<void> {
    const ctl = new AbortController();
    inst.workflowAbort = ctl;
    const onStop = () => ctl.abort();
    inst.abort.signal.addEventListener("abort", onStop, { once: true });
    try {
      const start = Date.now();
      const r = await runWorkflow(inst.workflowHost, ctl.signal);
      if (r === "completed") inst.traces.record("workflow", "workflow completed", start, Date.now());
    } catch (error) {
      if (inst.status === "awake" && inst.workflowAbort === ctl) this.crashed(inst.id, error, "workflow");
    } finally {
      inst.abort.signal.removeEventListener("abort", onStop);
    }
  }

  crashed(actorId: string, error: unknown, where: string): void {
    const rec = this.index.get(actorId);
    if (!rec || rec.destroy_ts !== null) return;
    const now = Date.now();
    const crashes = this.supervisor.recordCrash(actorId, now);
    const summary = errorSummary(error);
    this.logger.error("actor crashed", { actor_id: actorId, name: rec.name, where, policy: rec.crash_policy, crashes, error });
    this.traceStore.ring(actorId).record("crash", `crash ${where}`, now, now, error);
    const errorValue = { ...summary, where, at: now, crashes };
    (async () => {
      // Stop what is left of the instance, keeping what was acknowledged.
      const inst = this.live.get(actorId);
      if (inst) {
        this.live.delete(actorId);
        // A run() that threw left the actor whole (only its loop ended): it stops as a sleep
        // does, onSleep included, as RivetKit's does. Anything else keeps what was acknowledged.
        await this.awake.trackStop(actorId, inst.stop(where === "run" ? "sleep" : "crash")).catch(() => undefined);
      }
      if (this.stopped) return;
      const next = afterCrash(rec.crash_policy, crashes, this.supervisor.limits);
      if (next.then === "destroy") {
        await this.destroy(actorId).catch((e) => this.logger.error("destroying a crashed actor failed", { actor_id: actorId, error: e }));
        return;
      }
      if (next.then === "sleep") {
        // Asleep with its error: the next call wakes it.
        rec.error = errorValue;
        rec.sleep_ts = Date.now();
        rec.connectable_ts = null;
        await this.index.update(rec);
        this.emitRecord(rec);
        return;
      }
      rec.connectable_ts = null;
      await this.index.update(rec);
      this.emitRecord(rec);
      this.supervisor.scheduleRestart(actorId, next.delayMs, () => this.wakeInBackground(actorId, "restart after crash"));
    })().catch((e) => this.logger.error("handling an actor crash failed", { actor_id: actorId, error: e }));
  }

  // ---------- runners ----------

  /** What the user-code runner (runner/) needs of the runtime. */
  runnerHost(): RunnerHost {
    const rt = this;
    return {
      crashed: (id, error, where) => this.crashed(id, error, where),
      runnerLost: (id) => this.runnerLost(id),
      rewake: (id) => void this.wakeInBackground(id, "runner restarted"),
      log: this.logger,
      get connections() {
        return rt.connectionsHost;
      },
    };
  }

  /** Where a runner's connection events go: the actor's live connections. */
  private readonly connectionsHost: RunnerConnections = {
    send: (actorId, connId, event, args) => this.live.get(actorId)?.conns.get(connId)?.transport.event(event, args),
    close: (actorId, connId, reason) =>
      this.live
        .get(actorId)
        ?.conns.get(connId)
        ?.transport.close(1000, reason ?? ""),
  };

  /**
   * The actor's runner stopped because of another actor's code: stop this one without its hooks
   * (what it acknowledged is on disk) and mark it asleep; the runner wakes it when it is back.
   */
  private async runnerLost(actorId: string): Promise<void> {
    const inst = this.live.get(actorId);
    if (!inst) return;
    this.live.delete(actorId);
    await this.awake.trackStop(actorId, inst.stop("crash")).catch(() => undefined);
    const rec = this.index.get(actorId);
    if (!rec || rec.destroy_ts !== null || this.stopped) return;
    rec.sleep_ts = Date.now();
    rec.connectable_ts = null;
    await this.index.update(rec);
    this.emitRecord(rec);
  }

  // ---------- alarms ----------
  now(): number {
    return this.clock.now();
  }

  alarmChanged(actorId: string, at: number | null): void {
    const write = this.index.setAlarm(actorId, at);
    if (!write) {
      if (at !== null && !this.alarms.has(actorId)) this.alarms.arm(actorId, at);
      return;
    }
    // The timer follows at once; a failed write leaves the index with the previous alarm,
    // which at worst wakes the actor once for nothing after a restart.
    write.catch((error) => this.logger.error("writing an actor's alarm failed", { actor_id: actorId, error }));
    if (at === null) this.alarms.disarm(actorId);
    else this.alarms.arm(actorId, at);
  }

  /** Run an awake actor's due scheduled calls in the background (a failed write is logged). */
  private runDue(inst: ActorInstance): void {
    inst.runDue().catch((error) => this.logger.error("running scheduled calls failed", { actor_id: inst.id, error }));
  }

  /** An alarm's time came: run the due calls of an awake actor, else wake it (which runs them and resumes the workflow). */
  private alarmDue(actorId: string): void {
    const inst = this.live.get(actorId);
    if (inst && inst.status === "awake") {
      this.runDue(inst);
      return;
    }
    this.wakeInBackground(actorId, "alarm");
  }

  // ---------- traces and inspector ----------

  inspector(actorId: string): ActorInspector {
    return createInspector(actorId, {
      awake: (id) => this.instance(id),
      record: (id) => this.liveRecord(id),
      traces: (id) => this.traceStore.ring(id),
    });
  }

  /** Wait for index writes in flight (tests). */
  async flush(): Promise<void> {
    await this.index.flushed();
  }
}
