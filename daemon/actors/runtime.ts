import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdir, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { actorKeyBytes, MAX_ACTOR_KEY_BYTES, parseActorKey } from "../../shared/actor-key.js";
import { AgentError } from "../../shared/errors.js";
import { silentLogger, type Logger } from "../log/logger.js";
import { DocStore } from "../store/doc-store.js";
import { encodeValue } from "./codec.js";
import { errorSummary, notFound, toCallerError } from "./errors.js";
import { ActorIndex } from "./index-store.js";
import { ACTOR_FILE_KIND, ACTOR_FILE_VERSION, ACTOR_LIMITS, ActorInstance, initialActorFile, type ActorFile, type InstanceHost } from "./instance.js";
import { BucketedKv, toKeyBytes } from "./kv.js";
import { createInspector } from "./inspector.js";
import { parseSpans, TraceRing } from "./traces.js";
import {
  CRASH_POLICIES,
  type ActorDefinition,
  type ActorInspector,
  type ActorModuleStatus,
  type ActorRecord,
  type ActorRuntime,
  type ActorStateName,
  type CreateActorRequest,
  type InvokeOptions,
  type ListActorsQuery,
} from "./types.js";
import { runWorkflow } from "./workflow.js";

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
}

export const CRASH_DEFAULTS = Object.freeze({ maxCrashes: 5, windowMs: 60_000, backoffBaseMs: 100, backoffMaxMs: 5_000 });

export interface ActorLogLine {
  ts: number;
  level: string;
  msg: string;
  fields?: Record<string, unknown>;
}

type ChangeEvent = { type: "record" | "state" | "broadcast"; actorId: string; record?: ActorRecord; event?: string; args?: unknown[] };

export function stateName(r: ActorRecord): ActorStateName {
  if (r.destroy_ts !== null) return "destroyed";
  if (r.error !== null && r.error !== undefined) return "crashed";
  if (r.sleep_ts !== null) return "sleeping";
  if (r.connectable_ts !== null) return "running";
  return "starting";
}

export class ActorRuntimeImpl implements ActorRuntime, InstanceHost {
  private readonly defs = new Map<string, { def: ActorDefinition; source: "builtin" | "user" }>();
  private index!: ActorIndex;
  private readonly live = new Map<string, ActorInstance>();
  private readonly starting = new Map<string, Promise<ActorInstance>>();
  private readonly stopping = new Map<string, Promise<void>>();
  private readonly creating = new Map<string, Promise<ActorRecord>>();
  private readonly destroying = new Map<string, Promise<ActorRecord>>();
  private readonly alarmTimers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly crashTimes = new Map<string, number[]>();
  private readonly restartTimers = new Map<string, NodeJS.Timeout>();
  private readonly traceRings = new Map<string, TraceRing>();
  private readonly logRings = new Map<string, ActorLogLine[]>();
  private readonly senders = new Map<string, (reply: unknown) => void>();
  private readonly listeners = new Set<(e: ChangeEvent) => void>();
  /** Actors to wake once their definition is registered (boot before a feature registered it). */
  private readonly wakeWhenDefined = new Map<string, Set<string>>();
  private readonly logger: Logger;
  private readonly actorLogger: Logger;
  private readonly crash: { maxCrashes: number; windowMs: number; backoffBaseMs: number; backoffMaxMs: number };
  private indexWrite: Promise<void> | null = null;
  private started = false;
  private stopped = false;

  constructor(private readonly options: RuntimeOptions) {
    this.logger = options.log ?? silentLogger;
    this.actorLogger = options.actorLog ?? this.logger;
    this.crash = { ...CRASH_DEFAULTS, ...options.crash };
  }

  // ---------- definitions ----------

  registerDefinition(name: string, definition: ActorDefinition, source: "builtin" | "user" = "builtin"): void {
    if (!definition || typeof definition !== "object" || !definition.actions || typeof definition.actions !== "object") {
      throw new AgentError("api.bad_request", `actor definition ${name} has no actions object`);
    }
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
    for (const inst of this.live.values()) if (inst.record.name === name) void this.sleep(inst.id).catch(() => undefined);
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
    await mkdir(this.options.dataDir, { recursive: true });
    this.index = await ActorIndex.open(join(this.options.dataDir, "index.json"));
    this.started = true;
    const boot = new Set(this.index.restartOnBoot);
    for (const rec of this.index.all()) {
      if (rec.destroy_ts !== null) continue;
      // Running (or waiting to be restarted after a crash) when the daemon went away, or awake
      // at a graceful stop.
      if ((rec.start_ts !== null && rec.sleep_ts === null) || boot.has(rec.actor_id)) this.wakeInBackground(rec.actor_id, "boot");
    }
    if (this.index.restartOnBoot.length) {
      this.index.restartOnBoot = [];
      await this.index.write();
    }
    for (const [id, at] of Object.entries(this.index.alarms())) this.armAlarm(id, at);
  }

  async stop(): Promise<void> {
    if (!this.started || this.stopped) return;
    this.stopped = true;
    for (const { timer } of this.alarmTimers.values()) clearTimeout(timer);
    for (const t of this.restartTimers.values()) clearTimeout(t);
    this.restartTimers.clear();
    if (this.starting.size) await Promise.allSettled([...this.starting.values()]);
    const awake = [...this.live.keys()];
    await Promise.allSettled(awake.map((id) => this.sleep(id)));
    await Promise.allSettled([...this.stopping.values()]);
    this.index.restartOnBoot = awake;
    await this.index.write();
    for (const { timer } of this.alarmTimers.values()) clearTimeout(timer);
    this.alarmTimers.clear();
  }

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

  private writeIndex(): Promise<void> {
    const p = this.index.write();
    this.indexWrite = p;
    return p;
  }

  // ---------- records ----------

  private validateCreate(req: CreateActorRequest): void {
    if (typeof req.name !== "string" || !req.name) throw new AgentError("api.bad_request", "name must be a non-empty string");
    if (typeof req.namespace !== "string" || !req.namespace) throw new AgentError("api.bad_request", "namespace must be a non-empty string");
    if (!CRASH_POLICIES.includes(req.crash_policy)) {
      throw new AgentError("api.bad_request", `crash_policy must be one of ${CRASH_POLICIES.join(", ")} (got ${JSON.stringify(req.crash_policy)})`);
    }
    if (req.key !== undefined && req.key !== null) {
      if (typeof req.key !== "string") throw new AgentError("api.bad_request", "key must be a string");
      if (actorKeyBytes(req.key) > MAX_ACTOR_KEY_BYTES) {
        throw new AgentError("actor.key_too_large", `the key is ${actorKeyBytes(req.key)} bytes; at most ${MAX_ACTOR_KEY_BYTES} are allowed`, { maxBytes: MAX_ACTOR_KEY_BYTES });
      }
    }
    if (typeof req.runner_name_selector !== "string" || !req.runner_name_selector) throw new AgentError("api.bad_request", "runner_name_selector must be a non-empty string");
    if (!this.defs.has(req.name)) throw new AgentError("actor.name_not_found", `no actor definition named ${req.name}`, { name: req.name });
  }

  private encodeInput(input: unknown): string | null {
    if (input === undefined) return null;
    const text = encodeValue(input);
    if (Buffer.byteLength(text) > ACTOR_LIMITS.inputMaxBytes) {
      throw new AgentError("actor.input_too_large", `the input may be at most ${ACTOR_LIMITS.inputMaxBytes} bytes`, { maxBytes: ACTOR_LIMITS.inputMaxBytes });
    }
    return text;
  }

  async getOrCreate(req: CreateActorRequest & { key: string }): Promise<{ actor: ActorRecord; created: boolean }> {
    this.validateCreate(req);
    const k = `${req.namespace}\u0000${req.name}\u0000${req.key}`;
    const existing = this.index.findLive(req.namespace, req.name, req.key);
    if (existing) return { actor: { ...existing }, created: false };
    const pending = this.creating.get(k);
    if (pending) return { actor: { ...(await pending) }, created: false };
    const p = this.doCreate(req, req.key);
    this.creating.set(k, p);
    try {
      return { actor: { ...(await p) }, created: true };
    } finally {
      this.creating.delete(k);
    }
  }

  async create(req: CreateActorRequest): Promise<ActorRecord> {
    this.validateCreate(req);
    const key = req.key ?? randomUUID();
    const k = `${req.namespace}\u0000${req.name}\u0000${key}`;
    const dup = () => {
      const existing = this.index.findLive(req.namespace, req.name, key);
      if (existing) {
        throw new AgentError("actor.duplicate_key", `an actor ${req.name} with key ${JSON.stringify(key)} already exists`, { existing_actor_id: existing.actor_id });
      }
    };
    dup();
    const pending = this.creating.get(k);
    if (pending) {
      await pending.catch(() => undefined);
      dup();
    }
    const p = this.doCreate(req, key);
    this.creating.set(k, p);
    try {
      return { ...(await p) };
    } finally {
      this.creating.delete(k);
    }
  }

  private async doCreate(req: CreateActorRequest, key: string): Promise<ActorRecord> {
    const input = this.encodeInput(req.input);
    let id = newActorId();
    while (this.index.get(id)) id = newActorId();
    const rec: ActorRecord = {
      actor_id: id,
      name: req.name,
      key,
      namespace_id: req.namespace,
      runner_name_selector: req.runner_name_selector,
      crash_policy: req.crash_policy,
      datacenter: req.datacenter ?? null,
      create_ts: Date.now(),
      connectable_ts: null,
      destroy_ts: null,
      sleep_ts: null,
      start_ts: null,
      error: null,
    };
    // The actor file first, so the index never points at a missing file.
    const doc = await this.openFile(rec, input);
    await doc.write();
    await this.index.add(rec);
    this.emitRecord(rec);
    if (rec.runner_name_selector === "default") {
      try {
        await this.wake(id, doc);
      } catch (error) {
        this.logger.warn("a new actor failed to start", { actor_id: id, name: rec.name, error: errorSummary(error) });
      }
    }
    return rec;
  }

  private fileOf(id: string): string {
    return join(this.options.dataDir, `${id}.json`);
  }

  private kvDir(id: string): string {
    return join(this.options.dataDir, `${id}.kv`);
  }

  private openFile(rec: ActorRecord, input: string | null): Promise<DocStore<ActorFile>> {
    return DocStore.open<ActorFile>({ file: this.fileOf(rec.actor_id), kind: ACTOR_FILE_KIND, version: ACTOR_FILE_VERSION, initial: () => initialActorFile(rec, input) });
  }

  list(q: ListActorsQuery): ActorRecord[] {
    const ns = q.namespace || "default";
    if (q.actor_ids && q.name !== undefined) throw new AgentError("api.bad_request", "give either actor_ids or name, not both");
    if (q.actor_ids) {
      if (q.actor_ids.length > 32) throw new AgentError("api.bad_request", "at most 32 actor_ids may be given");
      const out: ActorRecord[] = [];
      for (const id of q.actor_ids) {
        const r = this.index.get(id);
        if (r && r.destroy_ts === null && r.namespace_id === ns) out.push({ ...r });
      }
      return out;
    }
    if (q.name === undefined) throw new AgentError("api.bad_request", q.key !== undefined ? "key needs name" : "give actor_ids or name");
    const ids = this.index.idsByName(ns, q.name);
    const out: ActorRecord[] = [];
    for (let i = ids.length - 1; i >= 0; i--) {
      const r = this.index.get(ids[i]!);
      if (!r || r.destroy_ts !== null) continue;
      if (q.key !== undefined && r.key !== q.key) continue;
      out.push({ ...r });
    }
    out.sort((a, b) => b.create_ts - a.create_ts);
    return out;
  }

  /** Every live actor (for `agent actors list` without a name), newest first. */
  all(namespace?: string): ActorRecord[] {
    return this.index
      .all()
      .filter((r) => r.destroy_ts === null && (namespace === undefined || r.namespace_id === namespace))
      .map((r) => ({ ...r }))
      .sort((a, b) => b.create_ts - a.create_ts);
  }

  get(actorId: string): ActorRecord | undefined {
    const r = this.index.get(actorId);
    return r ? { ...r } : undefined;
  }

  private liveRecord(actorId: string): ActorRecord {
    const r = this.index.get(actorId);
    if (!r || r.destroy_ts !== null) throw notFound(actorId);
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

  private async wake(actorId: string, openedDoc?: DocStore<ActorFile>): Promise<ActorInstance> {
    for (;;) {
      const inst = this.live.get(actorId);
      if (inst && inst.status === "awake") return inst;
      const starting = this.starting.get(actorId);
      if (starting) return starting;
      const stopping = this.stopping.get(actorId);
      if (stopping) {
        await stopping;
        continue;
      }
      break;
    }
    if (this.stopped) throw new AgentError("daemon.stopping", "the actor runtime is stopping");
    const rec = this.liveRecord(actorId);
    if (rec.runner_name_selector !== "default") {
      throw new AgentError("actor.runner_unavailable", `no runner named ${rec.runner_name_selector} serves this actor`, { runner_name_selector: rec.runner_name_selector });
    }
    const entry = this.defs.get(rec.name);
    if (!entry) throw new AgentError("actor.name_not_found", `no actor definition named ${rec.name} is loaded`, { name: rec.name });
    const p = this.startInstance(rec, entry.def, openedDoc);
    this.starting.set(actorId, p);
    try {
      return await p;
    } finally {
      this.starting.delete(actorId);
    }
  }

  private async startInstance(rec: ActorRecord, def: ActorDefinition, openedDoc?: DocStore<ActorFile>): Promise<ActorInstance> {
    const doc = openedDoc ?? (await this.openFile(rec, null));
    const inst = new ActorInstance(rec, def, doc, new BucketedKv(this.kvDir(rec.actor_id)), this.traceRing(rec.actor_id), parseActorKey(rec.key), this);
    try {
      await inst.start();
    } catch (error) {
      inst.status = "stopped";
      inst.abort.abort();
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
    await this.writeIndex();
    this.emitRecord(rec);
    inst.afterStart();
    void inst.runDue();
    return inst;
  }

  private wakeInBackground(actorId: string, why: string): void {
    const rec = this.index.get(actorId);
    if (!rec || rec.destroy_ts !== null || this.stopped) return;
    if (!this.defs.has(rec.name)) {
      let set = this.wakeWhenDefined.get(rec.name);
      if (!set) this.wakeWhenDefined.set(rec.name, (set = new Set()));
      set.add(actorId);
      return;
    }
    this.wake(actorId).catch((error) => this.logger.warn("could not wake actor", { actor_id: actorId, why, error: errorSummary(error) }));
  }

  /** Put an awake actor to sleep (persisting state). */
  sleep(actorId: string): Promise<void> {
    const existing = this.stopping.get(actorId);
    if (existing) return existing;
    const inst = this.live.get(actorId);
    if (!inst) return Promise.resolve();
    const p = (async () => {
      this.live.delete(actorId);
      await inst.stop("sleep");
      await this.saveTraces(actorId);
      const rec = this.index.get(actorId);
      if (rec && rec.destroy_ts === null) {
        rec.sleep_ts = Date.now();
        rec.connectable_ts = null;
        await this.writeIndex();
        this.emitRecord(rec);
      }
    })().finally(() => this.stopping.delete(actorId));
    this.stopping.set(actorId, p);
    return p;
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
    if (this.stopping.has(actorId)) await this.stopping.get(actorId);
    let inst = this.live.get(actorId);
    if (!inst && this.defs.has(rec.name) && rec.runner_name_selector === "default") {
      // Wake it so onDestroy runs; a definition that no longer starts is destroyed without it.
      inst = await this.wake(actorId).catch(() => undefined);
    }
    if (rec.destroy_ts !== null) return { ...rec };
    const timer = this.restartTimers.get(actorId);
    if (timer) clearTimeout(timer);
    this.restartTimers.delete(actorId);
    if (inst) {
      this.live.delete(actorId);
      const p = inst.stop("destroy");
      this.stopping.set(actorId, p);
      await p.finally(() => this.stopping.delete(actorId));
    }
    rec.destroy_ts = Date.now();
    rec.connectable_ts = null;
    this.disarmAlarm(actorId);
    await this.index.markDestroyed(rec);
    await rm(this.fileOf(actorId), { force: true });
    await rm(`${this.fileOf(actorId)}.bak`, { force: true });
    await rm(`${this.fileOf(actorId)}.tmp`, { force: true });
    await rm(`${this.fileOf(actorId)}.wal`, { force: true }); // step journal (instance.ts)
    await BucketedKv.remove(this.kvDir(actorId));
    await rm(this.traceFile(actorId), { force: true });
    this.traceRings.delete(actorId);
    this.crashTimes.delete(actorId);
    this.emitRecord(rec);
    return { ...rec };
  }

  // ---------- calls ----------

  async action(actorId: string, name: string, args: unknown[], options?: InvokeOptions): Promise<unknown> {
    let inst = this.live.get(actorId);
    if (inst === undefined || inst.status !== "awake") inst = await this.wake(actorId);
    return this.invoke(inst, name, args, options);
  }

  private async invoke(inst: ActorInstance, name: string, args: unknown[], options?: InvokeOptions): Promise<unknown> {
    const actions = inst.def.actions;
    const fn = Object.hasOwn(actions, name) ? actions[name] : undefined;
    if (typeof fn !== "function") throw new AgentError("action.not_found", `actor ${inst.record.name} has no action ${name}`, { action: name });
    if (args !== undefined && !Array.isArray(args)) throw new AgentError("api.bad_request", "action args must be an array");
    const seq = inst.enter(options?.source ?? "rpc", { action: name, ...(options?.connParams !== undefined ? { params: options.connParams } : {}) });
    const start = Date.now();
    let failed: unknown;
    try {
      let result = fn(inst.c, ...(args ?? []));
      if (result !== null && typeof result === "object" && typeof (result as Promise<unknown>).then === "function") {
        result = await withTimeout(result as Promise<unknown>, options?.timeoutMs ?? inst.actionTimeout, name, options?.signal);
      }
      await inst.persist(false);
      return result;
    } catch (error) {
      failed = error;
      await inst.persist(false).catch(() => undefined);
      throw toCallerError(error, this.logger, { actor_id: inst.id, action: name });
    } finally {
      inst.leave(seq);
      inst.traces.record("action", `action ${name}`, start, Date.now(), failed, options?.source ? { "call.source": options.source } : undefined);
    }
  }

  async request(actorId: string, request: Request, options?: InvokeOptions): Promise<Response> {
    const inst = await this.instance(actorId);
    const handler = inst.def.onRequest;
    if (!handler) throw new AgentError("handler.request_not_defined", `actor ${inst.record.name} has no onRequest handler`);
    const seq = inst.enter(options?.source ?? "gateway", { request: `${request.method} ${new URL(request.url).pathname}` });
    const start = Date.now();
    let failed: unknown;
    try {
      const res = await withTimeout(Promise.resolve(handler(inst.c, request)), options?.timeoutMs ?? inst.actionTimeout, "onRequest", options?.signal);
      await inst.persist(false);
      if (!(res instanceof Response)) throw new Error("onRequest did not return a Response");
      return res;
    } catch (error) {
      failed = error;
      await inst.persist(false).catch(() => undefined);
      throw toCallerError(error, this.logger, { actor_id: inst.id, handler: "onRequest" });
    } finally {
      inst.leave(seq);
      inst.traces.record("request", `request ${request.method} ${new URL(request.url).pathname}`, start, Date.now(), failed);
    }
  }

  async enqueue(actorId: string, name: string, body: unknown, options?: { wait?: boolean; timeoutMs?: number }): Promise<{ status: "completed" | "timedOut"; response?: unknown; id: number }> {
    if (typeof name !== "string" || !name) throw new AgentError("api.bad_request", "a queue message needs a name");
    const inst = await this.instance(actorId);
    let waiter: Promise<{ status: "completed" | "timedOut"; response?: unknown }> | null = null;
    let id = 0;
    if (!options?.wait) {
      id = await inst.enqueue(name, body);
      return { status: "completed", id };
    }
    // Register the waiter before the consumer can complete the message.
    const q = inst.doc.data.queue;
    const expectedId = q.nextId;
    const key = `${actorId}:${expectedId}`;
    waiter = new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.senders.delete(key);
        resolve({ status: "timedOut" });
      }, options.timeoutMs ?? ACTOR_LIMITS.actionTimeoutMs);
      this.senders.set(key, (reply) => {
        clearTimeout(timer);
        this.senders.delete(key);
        resolve({ status: "completed", ...(reply !== undefined ? { response: reply } : {}) });
      });
    });
    try {
      id = await inst.enqueue(name, body);
    } catch (error) {
      this.senders.get(key)?.(undefined);
      this.senders.delete(key);
      throw error;
    }
    return { ...(await waiter), id };
  }

  async kvGet(actorId: string, key: Uint8Array): Promise<Uint8Array | null> {
    this.liveRecord(actorId);
    const inst = this.live.get(actorId);
    if (inst) return inst.kv.get(key);
    return BucketedKv.readOnce(this.kvDir(actorId), toKeyBytes(key));
  }

  // ---------- InstanceHost ----------

  /** The c.log lines of an actor (newest last): this run's ring, else the log file's lines. */
  logs(actorId: string, limit = 200): ActorLogLine[] {
    if (!this.index.get(actorId)) throw notFound(actorId);
    let ring = this.logRings.get(actorId) ?? [];
    if (ring.length === 0 && this.options.actorLogFile) ring = readLogFile(this.options.actorLogFile, actorId);
    return ring.slice(Math.max(0, ring.length - limit));
  }

  actorLog(actorId: string, level: "debug" | "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void {
    let ring = this.logRings.get(actorId);
    if (!ring) this.logRings.set(actorId, (ring = []));
    ring.push({ ts: Date.now(), level, msg: String(msg), ...(fields ? { fields } : {}) });
    if (ring.length > (this.options.logCapacity ?? 500)) ring.splice(0, ring.length - (this.options.logCapacity ?? 500));
    const rec = this.index?.get(actorId);
    this.actorLogger[level](String(msg), { actor_id: actorId, actor_name: rec?.name, ...fields });
  }

  broadcast(actorId: string, event: string, args: unknown[]): void {
    this.emit({ type: "broadcast", actorId, event, args });
  }

  requestSleep(actorId: string): void {
    setImmediate(() => void this.sleep(actorId).catch((error) => this.logger.error("sleep failed", { actor_id: actorId, error })));
  }

  requestDestroy(actorId: string): void {
    setImmediate(() => void this.destroy(actorId).catch((error) => this.logger.error("destroy failed", { actor_id: actorId, error })));
  }

  stateChanged(actorId: string): void {
    if (this.listeners.size) this.emit({ type: "state", actorId });
  }

  queueCompleted(actorId: string, messageId: number, reply: unknown): void {
    this.senders.get(`${actorId}:${messageId}`)?.(reply);
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
      const r = await runWorkflow(inst, ctl.signal);
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
    const times = (this.crashTimes.get(actorId) ?? []).filter((t) => now - t < this.crash.windowMs);
    times.push(now);
    this.crashTimes.set(actorId, times);
    const summary = errorSummary(error);
    this.logger.error("actor crashed", { actor_id: actorId, name: rec.name, where, policy: rec.crash_policy, crashes: times.length, error });
    this.traceRing(actorId).record("crash", `crash ${where}`, now, now, error);
    const errorValue = { ...summary, where, at: now, crashes: times.length };
    void (async () => {
      // Stop what is left of the instance, keeping what was acknowledged.
      const inst = this.live.get(actorId);
      if (inst) {
        this.live.delete(actorId);
        const p = inst.stop("crash");
        this.stopping.set(actorId, p);
        await p.catch(() => undefined).finally(() => this.stopping.delete(actorId));
      }
      if (this.stopped) return;
      if (rec.crash_policy === "destroy") {
        await this.destroy(actorId).catch((e) => this.logger.error("destroying a crashed actor failed", { actor_id: actorId, error: e }));
        return;
      }
      const markSleeping = async () => {
        rec.error = errorValue;
        rec.sleep_ts = Date.now();
        rec.connectable_ts = null;
        await this.writeIndex();
        this.emitRecord(rec);
      };
      if (rec.crash_policy === "sleep" || times.length >= this.crash.maxCrashes) {
        await markSleeping();
        return;
      }
      rec.connectable_ts = null;
      await this.writeIndex();
      this.emitRecord(rec);
      const delay = Math.min(this.crash.backoffMaxMs, this.crash.backoffBaseMs * 2 ** (times.length - 1));
      const timer = setTimeout(() => {
        this.restartTimers.delete(actorId);
        this.wakeInBackground(actorId, "restart after crash");
      }, delay);
      timer.unref();
      this.restartTimers.set(actorId, timer);
    })();
  }

  // ---------- alarms ----------

  alarmChanged(actorId: string, at: number | null): void {
    if (!this.index.setAlarm(actorId, at)) {
      if (at !== null && !this.alarmTimers.has(actorId)) this.armAlarm(actorId, at);
      return;
    }
    void this.writeIndex();
    if (at === null) this.disarmAlarm(actorId);
    else this.armAlarm(actorId, at);
  }

  private armAlarm(actorId: string, at: number): void {
    const cur = this.alarmTimers.get(actorId);
    if (cur) {
      if (cur.at === at) return;
      clearTimeout(cur.timer);
    }
    const wait = Math.min(Math.max(0, at - Date.now()), 2 ** 31 - 1);
    const timer = setTimeout(() => this.fireAlarm(actorId, at), wait);
    timer.unref();
    this.alarmTimers.set(actorId, { at, timer });
  }

  private disarmAlarm(actorId: string): void {
    const cur = this.alarmTimers.get(actorId);
    if (cur) clearTimeout(cur.timer);
    this.alarmTimers.delete(actorId);
  }

  private fireAlarm(actorId: string, at: number): void {
    const cur = this.alarmTimers.get(actorId);
    if (cur && cur.at === at) this.alarmTimers.delete(actorId);
    if (this.stopped) return;
    if (at > Date.now()) {
      this.armAlarm(actorId, at);
      return;
    }
    const inst = this.live.get(actorId);
    if (inst && inst.status === "awake") {
      void inst.runDue();
      return;
    }
    // Waking runs due calls and resumes the workflow.
    this.wakeInBackground(actorId, "alarm");
  }

  // ---------- traces and inspector ----------

  private traceFile(actorId: string): string {
    return join(this.options.dataDir, `${actorId}.traces`);
  }

  /** The actor's span ring; on first use in this run, the spans saved at its last sleep. */
  private traceRing(actorId: string): TraceRing {
    let ring = this.traceRings.get(actorId);
    if (!ring) {
      let saved: ReturnType<typeof parseSpans> = [];
      try {
        saved = parseSpans(readFileSync(this.traceFile(actorId), "utf8"));
      } catch {}
      this.traceRings.set(actorId, (ring = TraceRing.from(saved, this.options.traceCapacity)));
    }
    return ring;
  }

  /** Save the ring (bounded by its capacity) so traces survive sleep and a graceful restart. */
  private async saveTraces(actorId: string): Promise<void> {
    const ring = this.traceRings.get(actorId);
    if (!ring || ring.size === 0) return;
    const file = this.traceFile(actorId);
    try {
      await writeFile(`${file}.tmp`, JSON.stringify(ring.all()));
      await rename(`${file}.tmp`, file);
    } catch (error) {
      this.logger.warn("could not save an actor's traces", { actor_id: actorId, error: errorSummary(error) });
    }
  }

  inspector(actorId: string): ActorInspector {
    return createInspector(actorId, {
      awake: (id) => this.instance(id),
      record: (id) => this.liveRecord(id),
      traces: (id) => this.traceRing(id),
    });
  }

  /** Wait for index writes in flight (tests). */
  async flush(): Promise<void> {
    await this.indexWrite;
  }
}

function readLogFile(file: string, actorId: string): ActorLogLine[] {
  const out: ActorLogLine[] = [];
  let text = "";
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return out;
  }
  const needle = `"actor_id":${JSON.stringify(actorId)}`;
  for (const line of text.split("\n")) {
    if (!line.includes(needle)) continue;
    try {
      const { ts, level, msg, component: _c, actor_id: _a, actor_name: _n, ...fields } = JSON.parse(line) as Record<string, unknown>;
      out.push({ ts: Date.parse(String(ts)), level: String(level), msg: String(msg), ...(Object.keys(fields).length ? { fields } : {}) });
    } catch {}
  }
  return out;
}

/** 80 random bits as 16 lowercase base-36 characters: URL-safe and case-insensitive. */
export function newActorId(): string {
  return BigInt(`0x${randomBytes(10).toString("hex")}`).toString(36).padStart(16, "0");
}

function withTimeout<T>(p: Promise<T>, ms: number, name: string, signal?: AbortSignal): Promise<T> {
  let timer: NodeJS.Timeout;
  let onAbort: (() => void) | undefined;
  const guard = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new AgentError("action.timed_out", `${name} did not finish within ${ms} ms`, { timeoutMs: ms })), ms);
    if (signal) {
      onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new AgentError("action.cancelled", "the call was cancelled"));
      if (signal.aborted) onAbort();
      else signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return Promise.race([p, guard]).finally(() => {
    clearTimeout(timer);
    if (onAbort) signal!.removeEventListener("abort", onAbort);
  });
}
