/**
 * One awake actor: its context `c`, its lifecycle hooks, its calls in flight, its idle timer,
 * its queue and scheduled calls, and how its state reaches disk (actor-file-writer.ts, with
 * workflow steps going through the step journal, step-journal.ts).
 */
import { readFileSync } from "node:fs";
import { AgentError } from "../../../shared/errors.js";
import type { DocStore } from "../../store/doc-store.js";
import { toStorageError } from "../../store/storage-error.js";
import type { ActorFile } from "../storage/actor-file.js";
import { ActorFileWriter } from "../storage/actor-file-writer.js";
import type { FileJournal } from "../storage/file-journal.js";
import { decodeValue, encodeValue } from "../codec.js";
import { ActorStopped, errorSummary } from "../errors.js";
import { IdleSleepTimer } from "./idle-sleep-timer.js";
import type { BucketedKv } from "../storage/kv.js";
import { StepJournal } from "../storage/step-journal.js";
import type { TraceRing } from "../observe/traces.js";
import type { ActorContext, ActorDefinition, ActorQueue, ActorRecord } from "../types.js";
import { callContext, hasState, makeActorContext } from "../actor-context.js";
import { emptyHistory, type EntryMetadata, type WorkflowEntry } from "../workflow/history.js";
import type { WorkflowHost } from "../workflow/host.js";
import { ACTOR_LIMITS } from "./limits.js";
import { MessageQueue } from "./message-queue.js";
import { ScheduledCalls } from "./scheduled-calls.js";
import { runAsUserActor } from "../runtime/user-code.js";
import type { ModuleRunner } from "../runner/module-runner.js";
import { remoteConnHooks, remoteOf } from "../runner/remote-definition.js";
import { ActorConn, ActorConns, type ConnTransport, type ConnType, type ConnView } from "./connections.js";

/** What an instance needs from the runtime (kept small so it can be faked). */
export interface InstanceHost {
  actorLog(actorId: string, level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
  broadcast(actorId: string, event: string, args: unknown[]): void;
  requestSleep(actorId: string): void;
  requestDestroy(actorId: string): void;
  crashed(actorId: string, error: unknown, where: string): void;
  /** A write of the actor's file failed (the instance rolled back): log it and put the instance to sleep now, so the next call wakes it from disk. */
  writeFailed(actorId: string, error: unknown): void;
  alarmChanged(actorId: string, at: number | null): void;
  /** The runtime's clock: alarms and `c.schedule.after` read the time from it. */
  now(): number;
  stateChanged(actorId: string): void;
  queueCompleted(actorId: string, messageId: number, reply: unknown): void;
  invokeScheduled(actorId: string, action: string, args: unknown[]): Promise<unknown>;
  runWorkflow(instance: ActorInstance): Promise<void>;
  /** Where actor files are written (the journal of small files). */
  readonly files: FileJournal;
}

interface InFlightCall {
  id: string;
  type: string;
  details: unknown;
}

let callSeq = 0;

export class ActorInstance {
  status: "awake" | "stopping" | "stopped" = "awake";
  private stateBox: unknown;
  /** A remote actor's state changed in its worker and was not decoded here yet (`remoteText` has it). */
  private stateStale = false;
  vars: unknown;
  /** See `abort`: made on first use. */
  private abortController: AbortController | null = null;
  /** The instance stopped before anyone asked for its signal. */
  private stoppedUnobserved = false;
  /** See `c`. */
  private context: ActorContext | null = null;
  inFlight = 0;
  /** Workflow steps running now: count as activity for idle sleep. */
  activeSteps = 0;
  lastActivity = Date.now();
  readonly calls = new Map<number, InFlightCall>();
  /** Live connections (WebSocket): the actor does not idle-sleep while it has one. */
  readonly conns = new ActorConns();
  private lastStateText: string | null;
  private readonly journal: StepJournal;
  private readonly writer: ActorFileWriter;
  private readonly idleTimer: IdleSleepTimer;
  /**
   * Set when a write of the actor file failed. What it carried is taken back (the state, queue
   * and schedule return to what is on disk), no call waiting on a write is acknowledged, nothing
   * is written any more, and the instance goes to sleep: the next call wakes it from disk.
   */
  private writeFailure: AgentError | null = null;
  private idleWaiters: Array<() => void> = [];
  background: Promise<unknown>[] = [];
  /** Workflow wake-up time (durable sleep), for alarms. */
  private workflowWakeAt: number | null = null;
  workflowAbort: AbortController | null = null;
  /** The current run of the workflow, if any. */
  workflowRun: Promise<void> | null = null;
  readonly sleepTimeout: number;
  readonly actionTimeout: number;
  readonly queue: MessageQueue;
  readonly schedule: ScheduledCalls;
  /** See `workflowHost`. */
  private workflowView: WorkflowHost | null = null;
  /** The runner whose worker runs this actor's code, when it is a user actor (runner/). */
  readonly remote: ModuleRunner | undefined;
  /** A remote actor's state as the worker last sent it (encoded): what persist writes. */
  private remoteText: string;

  constructor(
    readonly record: ActorRecord,
    readonly def: ActorDefinition,
    readonly doc: DocStore<ActorFile>,
    readonly kv: BucketedKv,
    readonly traces: TraceRing,
    readonly keyParts: string[],
    private readonly host: InstanceHost,
    /** Defined by a user module: its code runs in the actor's async context (runtime/user-code.ts). */
    readonly userCode = false,
  ) {
    this.sleepTimeout = def.options?.sleepTimeout ?? ACTOR_LIMITS.sleepTimeoutMs;
    this.actionTimeout = def.options?.actionTimeout ?? ACTOR_LIMITS.actionTimeoutMs;
    this.idleTimer = new IdleSleepTimer(this, this.sleepTimeout, () => this.host.requestSleep(this.id));
    this.journal = new StepJournal(`${doc.file}.wal`);
    this.journal.load(doc.data);
    // A failed write leaves the state unacknowledged: forget what was "written" so the next
    // persist writes it again instead of answering from the unchanged-state shortcut.
    this.writer = new ActorFileWriter(doc, host.files, this.journal, () => {
      this.lastStateText = null;
    });
    this.lastStateText = doc.data.state;
    this.stateValue = doc.data.state === null ? undefined : decodeValue(doc.data.state);
    this.remote = remoteOf(def);
    this.remoteText = doc.data.state ?? "null";
    const self = this;
    this.queue = new MessageQueue({
      id: record.actor_id,
      get data() {
        return doc.data.queue;
      },
      get signal() {
        return self.abort.signal;
      },
      isAwake: () => this.status === "awake",
      write: () => this.write(),
      completed: (messageId, reply) => host.queueCompleted(this.id, messageId, reply),
    });
    this.schedule = new ScheduledCalls({
      id: record.actor_id,
      get data() {
        return doc.data.schedule;
      },
      hasAction: (name) => Object.hasOwn(def.actions, name),
      isAwake: () => this.status === "awake",
      now: () => host.now(),
      write: () => this.write(),
      invoke: (action, args) => host.invokeScheduled(this.id, action, args),
      failed: (action, error) => host.actorLog(this.id, "error", `scheduled action ${action} failed`, { error }),
      changed: () => this.alarmChanged(),
    });
  }

  /**
   * The context `c` the actor's code sees, made on first use: a user actor's code runs in a
   * runner thread with a context of its own, and this one is only reached for what it asks the
   * daemon to do; at thousands of awake actors, not making it saves a few KB each (issue 31).
   */
  get c(): ActorContext {
    return (this.context ??= this.makeContext());
  }

  /** What the workflow engine sees of this actor, made on first use (most actors have no workflow). */
  get workflowHost(): WorkflowHost {
    return (this.workflowView ??= this.makeWorkflowHost());
  }

  private makeWorkflowHost(): WorkflowHost {
    const def = this.def;
    const doc = this.doc;
    const host = this.host;
    return {
      context: this.c,
      workflow: def.workflow,
      history: () => (doc.data.workflow ??= emptyHistory()),
      stepStarted: () => {
        this.activeSteps++;
      },
      stepEnded: () => {
        this.activeSteps--;
        this.settled();
      },
      span: (kind, name, fn, attrs) => this.span(kind, name, fn, attrs),
      trace: (kind, name, start, end, attrs) => this.traces.record(kind, name, start, end, undefined, attrs),
      recordStep: (entry, meta) => this.journalStep(entry, meta),
      persist: () => this.persist(true),
      setWakeAt: (at) => {
        this.workflowWakeAt = at;
        this.alarmChanged();
      },
      nextMessage: (options) => this.queue.next(options),
      takeMessage: (id) => void this.queue.remove(id, false),
      completeMessage: async (id, reply) => host.queueCompleted(this.id, id, reply),
    };
  }

  get id(): string {
    return this.record.actor_id;
  }

  /**
   * The state as a value. A remote actor's state lives in its worker: the daemon keeps the text
   * the worker sent (all that persisting needs) and decodes it only when something here reads it
   * (the inspector, a hook's context), not on every answer.
   */
  get stateValue(): unknown {
    if (this.stateStale) {
      this.stateStale = false;
      this.stateBox = decodeValue(this.remoteText);
    }
    return this.stateBox;
  }

  set stateValue(v: unknown) {
    this.stateStale = false;
    this.stateBox = v;
  }

  /**
   * Aborted when the instance stops (c.abortSignal, queue waits, the workflow). Made on first
   * use: most actors never look at it, and making and aborting one per actor is a good part
   * of what 10k actors falling asleep together cost.
   */
  get abort(): AbortController {
    if (!this.abortController) {
      this.abortController = new AbortController();
      if (this.stoppedUnobserved) this.abortController.abort(new ActorStopped());
    }
    return this.abortController;
  }

  /** The instance stops: abort its signal (or the one it gets when asked for later). */
  private abortOnStop(): void {
    if (this.abortController) this.abortController.abort(new ActorStopped());
    else this.stoppedUnobserved = true;
  }

  /**
   * Run `fn` as this actor's code, so what it schedules and later throws is charged to this actor.
   * A remote actor's code runs in its worker, which charges it there: here only the daemon's stubs
   * run, and leaving the async context unused spares every promise of the daemon its hooks.
   */
  asActor<T>(fn: () => T): T {
    return this.userCode && !this.remote ? runAsUserActor(this.record.actor_id, fn) : fn();
  }

  /** The context `c` (actor-context.ts), over this instance: state, KV, queue and schedule reached directly. */
  private makeContext(): ActorContext {
    const self = this;
    const id = this.record.actor_id;
    const queue: ActorQueue = {
      next: (options) => self.queue.nextForActor(options),
      iter: (options) => self.queue.iter(options),
      get size() {
        return self.queue.size;
      },
    };
    return makeActorContext({
      actorId: id,
      name: this.record.name,
      key: this.keyParts,
      holder: this,
      stateEnabled: hasState(this.def),
      kv: this.kv,
      rivetKitKv: this.userCode,
      queue,
      conns: this.conns.views,
      abortSignal: () => self.abort.signal,
      log: (level, msg, fields) => self.host.actorLog(id, level, msg, fields),
      broadcast: (event, args) => self.host.broadcast(id, event, args),
      saveState: () => self.persist(false),
      sleep: () => self.host.requestSleep(id),
      destroy: () => self.host.requestDestroy(id),
      now: () => self.host.now(),
      scheduleAt: (at, action, args) => self.schedule.at(at, action, args),
    });
  }

  // ---------- lifecycle ----------

  /** createState/onCreate on first start, createVars, onWake; then run/workflow in the background. */
  start(): Promise<void> {
    return this.asActor(() => this.runStartHooks());
  }

  private async runStartHooks(): Promise<void> {
    const def = this.def;
    if (this.remote) await this.remote.attach(this);
    const file = this.doc.data;
    const isNew = !file.initialized;
    if (isNew) {
      const input = decodeValue(file.input);
      await this.span("hook", "createState", async () => {
        if (def.createState) this.stateValue = await def.createState(this.c, input);
        else if (def.state !== undefined) this.stateValue = structuredClone(def.state);
      });
      // The initial state is not a change (onStateChange is for changes).
      this.lastStateText = this.doc.data.state = encodeValue(this.stateValue);
      this.remoteText = this.lastStateText;
      if (def.createVars) this.vars = await def.createVars(this.c);
      else if (def.vars !== undefined) this.vars = structuredClone(def.vars);
      if (def.onCreate) await this.span("hook", "onCreate", () => def.onCreate!(this.c, input));
      file.initialized = true;
      file.input = null;
      await this.persist(true);
    } else if (def.createVars) this.vars = await def.createVars(this.c);
    else if (def.vars !== undefined) this.vars = structuredClone(def.vars);
    if (def.onWake) {
      await this.span("hook", "onWake", () => def.onWake!(this.c));
      await this.persist(false);
    }
  }

  /** After start succeeded and the record says running. */
  afterStart(): void {
    this.armIdle();
    if (this.def.run) {
      const p = Promise.resolve()
        .then(() => this.asActor(() => this.def.run!(this.c)))
        .catch((error) => {
          if (this.status === "awake" && !(error instanceof ActorStopped)) this.host.crashed(this.id, error, "run");
        });
      this.background.push(p);
    }
    if (this.def.workflow) this.startWorkflow();
    this.alarmChanged();
  }

  /** Start (or restart, after a replay) the workflow in the background. */
  startWorkflow(): void {
    const p = this.asActor(() => this.host.runWorkflow(this));
    this.workflowRun = p;
    this.background.push(p);
  }

  private armIdle(): void {
    if (this.def.options?.noSleep) return;
    this.idleTimer.start();
  }

  /**
   * Stop the instance. `sleep`: wait for in-flight calls, abort, onSleep, persist. `destroy`:
   * abort, onDestroy. `crash`: abort and persist what was acknowledged.
   */
  async stop(reason: "sleep" | "destroy" | "crash"): Promise<void> {
    if (this.status !== "awake") return;
    this.status = "stopping";
    this.idleTimer.stop();
    if (reason === "sleep" && (this.inFlight > 0 || this.activeSteps > 0)) {
      await Promise.race([
        new Promise<void>((resolve) => this.idleWaiters.push(resolve)),
        new Promise<void>((resolve) => setTimeout(resolve, ACTOR_LIMITS.sleepGraceMs)),
      ]);
    }
    this.abortOnStop();
    this.workflowAbort?.abort(new ActorStopped());
    this.queue.stop();
    const closeReason = reason === "destroy" ? "actor.destroyed" : "actor.stopped";
    // Raw WebSockets stay open through onSleep / onDestroy (what those send still arrives, as
    // in RivetKit) and are closed after; a crash closes everything at once.
    const closed = this.closeConnections(closeReason, reason !== "crash");
    // Let run/workflow notice the abort (bounded: user code may ignore the signal).
    if (this.background.length) await Promise.race([Promise.allSettled(this.background), new Promise((r) => setTimeout(r, 1000))]);
    await this.disconnected(closed);
    try {
      if (reason === "sleep" && this.def.onSleep) await this.span("hook", "onSleep", () => this.asActor(() => this.def.onSleep!(this.c)));
      if (reason === "destroy" && this.def.onDestroy) await this.span("hook", "onDestroy", () => this.asActor(() => this.def.onDestroy!(this.c)));
    } catch (error) {
      this.host.actorLog(this.id, "error", `${reason === "sleep" ? "onSleep" : "onDestroy"} threw`, { error: errorSummary(error) });
    }
    this.closeConnections(closeReason, false);
    if (reason !== "destroy") {
      // After a failed write there is nothing to save: the disk holds the last acknowledged state.
      // Otherwise written only when something changed (or the step journal has lines to fold
      // in): the record copy is for rebuilding a lost index, and a sleep storm must not rewrite
      // every actor file for nothing.
      if (!this.writeFailure) {
        this.doc.data.record = { ...this.record };
        await this.persist(this.journal.hasLines);
      }
    } else {
      await this.writer.pending()?.catch(() => undefined);
      // Its files are about to be removed: a late write must not bring them back.
      this.journal.close();
    }
    this.status = "stopped";
    this.remote?.detach(this);
  }

  // ---------- connections ----------

  get openConnections(): number {
    return this.conns.size;
  }

  /**
   * A connection, as RivetKit's `prepareConn` + `connectConn` make one: onBeforeConnect (a
   * throw refuses it) and createConnState see `c.request` (the HTTP request or upgrade that
   * made it, when there is one), then onConnect sees `c.conn`. Every way in is a connection:
   * `handle.connect()` (`websocket`), a raw WebSocket, and, for the length of the call, a
   * stateless HTTP action (`http`) or raw request (`raw-request`).
   */
  async connect(params: unknown, transport: ConnTransport, options?: { type?: ConnType; request?: Request }): Promise<ActorConn> {
    const def = this.def;
    const seq = this.enter("connect", { params: params ?? null });
    const conn = new ActorConn(options?.type ?? "websocket", params, transport);
    let added = false;
    try {
      const init = options?.request ? this.connContext(undefined, options.request) : this.c;
      if (def.onBeforeConnect) await this.span("hook", "onBeforeConnect", () => def.onBeforeConnect!(init, params));
      if (def.createConnState) conn.state = await this.span("hook", "createConnState", () => def.createConnState!(init, params));
      else if (def.connState !== undefined) conn.state = structuredClone(def.connState);
      this.conns.add(conn);
      added = true;
      if (def.onConnect) await this.span("hook", "onConnect", () => def.onConnect!(this.connContext(conn.view), conn.view));
      await this.persist(false);
      return conn;
    } catch (error) {
      if (added) this.conns.remove(conn);
      throw error;
    } finally {
      this.leave(seq);
    }
  }

  /** `c` with `c.conn` and/or `c.request`, as RivetKit's connection contexts have them. */
  connContext(conn?: ConnView, request?: Request): ActorContext {
    const props: PropertyDescriptorMap = {};
    if (conn) props.conn = { value: conn, enumerable: true };
    if (request) props.request = { value: request, enumerable: true };
    return callContext(this.c, props);
  }

  /**
   * Whether the definition has connection hooks: only then is a stateless HTTP call made a
   * connection for its length (the hot path stays free of it otherwise).
   */
  get hasConnectionHooks(): boolean {
    const d = this.def;
    const remote = remoteConnHooks(d);
    if (remote !== undefined) return remote;
    return !!(d.onBeforeConnect || d.createConnState || d.connState !== undefined || d.onConnect || d.onDisconnect);
  }

  /** The connection's socket closed (or its HTTP call ended): onDisconnect (its failure is logged). */
  async disconnect(conn: ActorConn): Promise<void> {
    if (!this.conns.remove(conn)) return;
    this.lastActivity = Date.now();
    if (this.status !== "awake") return;
    const hook = this.def.onDisconnect;
    if (!hook) return;
    try {
      await this.span("hook", "onDisconnect", () => hook(this.connContext(conn.view), conn.view));
      await this.persist(false);
    } catch (error) {
      this.host.actorLog(this.id, "error", "onDisconnect threw", { error: errorSummary(error) });
    }
  }

  /** Close every connection (the actor stops); the clients reconnect, which wakes it again. */
  private closeConnections(reason: string, keepRaw: boolean): ActorConn[] {
    const closed = [...this.conns.values()].filter((conn) => !keepRaw || conn.type !== "raw-websocket");
    for (const conn of closed) {
      this.conns.remove(conn);
      try {
        conn.transport.close(1012, reason);
      } catch {}
    }
    return closed;
  }

  /**
   * onDisconnect for the connections a stop closed (sleep, destroy, crash), before onSleep /
   * onDestroy, at most `sleepGraceMs` in all. Skipped when the actor's code cannot run any more:
   * its runner's worker died or is being stopped (README "Connections").
   */
  private async disconnected(closed: ActorConn[]): Promise<void> {
    const hook = this.def.onDisconnect;
    const conns = closed.filter((c) => c.type === "websocket");
    if (!hook || conns.length === 0) return;
    if (this.remote && !this.remote.canRun(this.id)) {
      this.host.actorLog(this.id, "warn", "onDisconnect not run: the actor's runner stopped", { connections: conns.length });
      return;
    }
    const all = Promise.allSettled(
      conns.map((conn) =>
        this.span("hook", "onDisconnect", () => this.asActor(() => hook(this.connContext(conn.view), conn.view))).catch((error) =>
          this.host.actorLog(this.id, "error", "onDisconnect threw", { error: errorSummary(error) }),
        ),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([all, new Promise((r) => (timer = setTimeout(r, ACTOR_LIMITS.sleepGraceMs)))]);
    clearTimeout(timer);
  }

  /** The inspector's entries of the live connections; a remote actor's states as its worker has them (bounded wait). */
  async connectionEntries(): Promise<Array<{ id: string; type: string; details: unknown }>> {
    if (this.remote && this.conns.size > 0 && this.remote.canRun(this.id)) {
      let timer: NodeJS.Timeout | undefined;
      const states = await Promise.race([
        this.remote.connStates(this.id).catch(() => null),
        new Promise<null>((r) => (timer = setTimeout(() => r(null), 1000))),
      ]);
      clearTimeout(timer);
      if (states) for (const [id, state] of Object.entries(states)) this.conns.get(id)?.setState(state);
    }
    return [...this.conns.values()].map((c) => c.entry());
  }

  // ---------- calls ----------

  enter(type: string, details: unknown): number {
    this.inFlight++;
    const seq = ++callSeq;
    this.calls.set(seq, { id: String(seq), type, details });
    return seq;
  }

  leave(seq: number): void {
    this.inFlight--;
    this.calls.delete(seq);
    this.settled();
  }

  /** After a call or a workflow step finished: wake a sleep waiting for quiet. */
  settled(): void {
    this.lastActivity = Date.now();
    if (this.inFlight === 0 && this.activeSteps === 0 && this.idleWaiters.length) {
      for (const w of this.idleWaiters) w();
      this.idleWaiters = [];
    }
  }

  /** Persist state if it changed (or always with `force`); resolves once it is on disk. */
  persist(force: boolean): Promise<void> {
    if (this.writeFailure) return Promise.reject(this.writeFailure);
    const text = this.stateText();
    if (text !== this.lastStateText) {
      this.stateChangedTo(text);
      return this.write();
    }
    if (force) return this.write();
    // Unchanged by this call, but another call's change may still be on its way to disk.
    const pending = this.writer.pending();
    return pending ? this.guard(pending) : Promise.resolve();
  }

  /** The state, encoded: a remote actor's as its worker sent it. */
  private stateText(): string {
    return this.remote ? this.remoteText : encodeValue(this.stateValue);
  }

  /** The worker sent the state its code left (runner/module-runner.ts). */
  applyRemoteState(text: string): void {
    if (text === this.remoteText) return;
    this.remoteText = text;
    this.stateStale = true;
  }

  /** Replace the whole state (the inspector); a remote actor's worker takes it too. */
  replaceState(state: unknown): void {
    this.stateValue = state;
    if (this.remote) {
      this.remoteText = encodeValue(state);
      this.remote.pushState(this.id, this.remoteText);
    }
  }

  /** A start that failed: the worker forgets the actor. */
  release(): void {
    this.remote?.detach(this);
  }

  /** The state now encodes to `text` (not yet on disk): keep it for the next write and tell onStateChange and the host. */
  private stateChangedTo(text: string, journaled = false): void {
    this.lastStateText = text;
    this.doc.data.state = text;
    if (this.def.onStateChange) {
      try {
        this.def.onStateChange(this.c, this.stateValue);
      } catch (error) {
        this.host.actorLog(this.id, "error", "onStateChange threw", { error: errorSummary(error) });
      }
      // What onStateChange itself wrote is part of this change, not a change for the next call
      // to find (RivetKit runs no onStateChange for it). A step's journal line already holds the
      // text before the hook: there the next step's line carries the hook's write.
      if (!this.remote) {
        const after = encodeValue(this.stateValue);
        if (after !== text) {
          this.doc.data.state = after;
          if (!journaled) this.lastStateText = after;
        }
      }
    }
    this.host.stateChanged(this.id);
  }

  /**
   * Record a finished (or failed) workflow step: one line appended to the step journal instead
   * of rewriting the actor file, so a step costs the same however long the history is. Resolves
   * once the line is written (the same guarantee as the actor file's rename: it survives a
   * kill -9). The next full write of the actor file folds the journal in and removes it.
   */
  journalStep(entry: WorkflowEntry, meta: EntryMetadata): Promise<void> {
    if (this.writeFailure) return Promise.reject(this.writeFailure);
    if (this.journal.closed) return Promise.resolve();
    const h = this.doc.data.workflow;
    if (!h) return this.persist(true);
    const text = this.stateText();
    const stateChanged = text !== this.lastStateText;
    try {
      this.journal.append(h, entry, meta, stateChanged ? text : undefined);
    } catch (error) {
      // A step that is not on disk did not happen: roll back like a failed write of the file.
      return Promise.reject(this.writeFailed(toStorageError(error, this.journal.file)));
    }
    if (stateChanged) this.stateChangedTo(text, true);
    return this.journal.oversized ? this.write() : Promise.resolve();
  }

  /** Write the actor file (coalesced with other writes of this event-loop turn); resolves once on disk. */
  private write(): Promise<void> {
    if (this.writeFailure) return Promise.reject(this.writeFailure);
    return this.guard(this.writer.write());
  }

  /**
   * Every wait for a write goes through here. The first caller to hear of a failure rolls back
   * before any other caller runs (and before the writer's next write, a setImmediate later);
   * a write that succeeded after a failure carried rolled-back data, so its callers fail too.
   */
  private guard(write: Promise<void>): Promise<void> {
    return write.then(
      () => {
        if (this.writeFailure) throw this.writeFailure;
      },
      (error) => {
        throw this.writeFailed(error);
      },
    );
  }

  private writeFailed(error: unknown): AgentError {
    if (this.writeFailure) return this.writeFailure;
    const mapped = toStorageError(error, this.doc.file);
    const failure =
      mapped instanceof AgentError
        ? mapped
        : new AgentError(
            "storage.write_failed",
            `cannot write ${this.doc.file}: ${mapped instanceof Error ? mapped.message : String(mapped)}`,
            { file: this.doc.file },
            { cause: mapped },
          );
    this.writeFailure = failure;
    const restored = this.restoreFromDisk();
    if (!restored) this.host.actorLog(this.id, "error", "could not read the actor file back after a failed write; this instance writes nothing more");
    this.host.writeFailed(this.id, failure);
    return failure;
  }

  /**
   * Put the state, queue and schedule back to what is on disk (the actor file and its step
   * journal), so a write already queued writes nothing that was not acknowledged. When the file
   * cannot be read, no write of this instance happens any more instead.
   */
  private restoreFromDisk(): boolean {
    try {
      const env = JSON.parse(readFileSync(this.doc.file, "utf8")) as { data: ActorFile };
      const data = env.data;
      new StepJournal(this.journal.file).load(data);
      const live = this.doc.data;
      live.state = data.state;
      live.queue = data.queue;
      live.schedule = data.schedule;
      this.lastStateText = data.state;
      this.stateValue = data.state === null ? undefined : decodeValue(data.state);
      this.remoteText = data.state ?? "null";
      return true;
    } catch {
      // The writer skips a closed journal's actor: the last resort against writing what failed.
      this.journal.closed = true;
      return false;
    }
  }

  async span<T>(kind: string, name: string, fn: () => T | Promise<T>, attrs?: Record<string, string | number | boolean>): Promise<T> {
    const start = Date.now();
    try {
      const r = await fn();
      this.traces.record(kind, `${kind} ${name}`, start, Date.now(), undefined, attrs);
      return r;
    } catch (error) {
      this.traces.record(kind, `${kind} ${name}`, start, Date.now(), error, attrs);
      throw error;
    }
  }

  // ---------- alarm ----------

  /** The actor's next wake-up: its earliest scheduled call or its workflow's durable sleep. */
  nextAlarm(): number | null {
    const call = this.schedule.earliest();
    const wake = this.workflowWakeAt;
    return call === null ? wake : wake === null ? call : Math.min(call, wake);
  }

  private alarmChanged(): void {
    this.host.alarmChanged(this.id, this.nextAlarm());
  }

  /** Run the scheduled calls that are due. */
  runDue(): Promise<void> {
    return this.schedule.runDue();
  }
}
