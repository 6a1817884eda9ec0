import { closeSync, ftruncateSync, fstatSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { AgentError } from "../../../shared/errors.js";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";
import { syncDirSync, syncFd, syncsWrites } from "../../store/durability.js";
import type { ActorRecord } from "../types.js";

/**
 * The index of every actor record: the management API's view (list, get, get-or-create
 * matching), the next alarm per actor and the actors to wake at boot, without opening actor
 * files. Destroyed actors stay as records (with destroy_ts) and are excluded from lists.
 *
 * On disk (README "Design notes", actor index): a snapshot `index.json` plus an append-only
 * journal `index.journal.<gen>`, one JSON line per change. Every change names what changed
 * (`add`, `update(rec)`, `markDestroyed`, `setAlarm`, `setRestartOnBoot`) and resolves once its
 * line is appended; the changes of one event-loop turn share one append (group commit), so a
 * lifecycle event costs O(1) in the number of actors. When the journal outgrows the snapshot,
 * a compaction starts the next journal and writes a new snapshot in chunks in the background;
 * the snapshot names the first journal it does not contain. Lines hold whole values (a record,
 * an alarm time, the boot list), so replaying a line the snapshot already has is harmless. A
 * torn last line was never acknowledged: it is ignored (and cut off before the next append).
 *
 * In memory it is indexed by (namespace, name, key) for live actors and by (namespace, name) in
 * creation order for paged listing, so no call scans all actors.
 */
const SNAPSHOT_KIND = "actor-index";
const SNAPSHOT_VERSION = 2;
/** The journal is compacted once it is larger than this and than the last snapshot. */
const COMPACT_MIN_BYTES = 8 * 1024 * 1024;
/** A graceful stop compacts a journal larger than this. */
const CLOSE_COMPACT_BYTES = 1024 * 1024;
/** Records per snapshot chunk (one write, then the event loop runs). */
const SNAPSHOT_CHUNK = 2000;
/** The record fields, in the order of a snapshot row. */
const FIELDS = [
  "actor_id",
  "name",
  "key",
  "namespace_id",
  "runner_name_selector",
  "crash_policy",
  "datacenter",
  "create_ts",
  "connectable_ts",
  "destroy_ts",
  "sleep_ts",
  "start_ts",
  "error",
] as const;

type Line = ["r", ActorRecord] | ["a", string, number | null] | ["b", string[]];

const liveKey = (ns: string, name: string, key: string) => `${ns}\u0000${name}\u0000${key}`;
const nameKey = (ns: string, name: string) => `${ns}\u0000${name}`;
const journalName = (gen: number) => `index.journal.${gen}`;

/** The ids of one (namespace, name) in creation order; destroyed ones are dropped lazily. */
interface NameList {
  ids: string[];
  dead: number;
}

export interface IndexPage {
  records: ActorRecord[];
  /** Pass back as `cursor` for the next page; null on the last page. */
  cursor: string | null;
}

export class ActorIndex {
  private readonly records = new Map<string, ActorRecord>();
  /** Creation order of each record (for cursors); never reused in a run. */
  private readonly order = new Map<string, number>();
  private nextOrder = 0;
  private readonly byKey = new Map<string, string>();
  private readonly byName = new Map<string, NameList>();
  private readonly alarmAt: Record<string, number> = Object.create(null);
  private bootIds: string[] = [];

  private fd = -1;
  private gen = 0;
  private journalBytes = 0;
  private snapshotBytes = 0;
  /** Changes of this event-loop turn, appended together. */
  private pendingRecs = new Set<ActorRecord>();
  private pendingAlarms = new Map<string, number | null>();
  private pendingBoot: string[] | null = null;
  private pendingWrite: Promise<void> | null = null;
  private lastWrite: Promise<void> | null = null;
  private compacting: Promise<void> | null = null;
  private closed = false;

  private constructor(private readonly file: string) {}

  static async open(file: string): Promise<ActorIndex> {
    const index = new ActorIndex(file);
    await index.load();
    return index;
  }

  // ---------- reading ----------

  get size(): number {
    return this.records.size;
  }

  get(id: string): ActorRecord | undefined {
    return this.records.get(id);
  }

  findLive(ns: string, name: string, key: string): ActorRecord | undefined {
    const id = this.byKey.get(liveKey(ns, name, key));
    return id === undefined ? undefined : this.records.get(id);
  }

  /** Every record (destroyed ones too), in creation order. */
  all(): IterableIterator<ActorRecord> {
    return this.records.values();
  }

  /** The live ids of (namespace, name) in creation order (may hold destroyed ids: check the record). */
  idsByName(ns: string, name: string): readonly string[] {
    return this.byName.get(nameKey(ns, name))?.ids ?? [];
  }

  /**
   * Live records of (namespace, name), newest first, after the actor `cursor` (a previous
   * page's last actor id), at most `limit`: the cost is that of the page.
   */
  page(ns: string, name: string, limit: number, cursor?: string): IndexPage {
    const ids = this.idsByName(ns, name);
    let i = ids.length - 1;
    if (cursor !== undefined) {
      const at = this.order.get(cursor);
      const rec = this.records.get(cursor);
      if (at === undefined || !rec || rec.namespace_id !== ns || rec.name !== name)
        throw new AgentError("api.bad_request", "cursor is not an actor of this list");
      // The last position whose creation order is below the cursor's.
      let lo = 0;
      let hi = ids.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (this.order.get(ids[mid]!)! < at) lo = mid + 1;
        else hi = mid;
      }
      i = lo - 1;
    }
    const records: ActorRecord[] = [];
    for (; i >= 0 && records.length < limit; i--) {
      const r = this.records.get(ids[i]!)!;
      if (r.destroy_ts === null) records.push(r);
    }
    let more = false;
    for (; i >= 0; i--) {
      if (this.records.get(ids[i]!)!.destroy_ts === null) {
        more = true;
        break;
      }
    }
    return { records, cursor: more && records.length ? records[records.length - 1]!.actor_id : null };
  }

  alarms(): Readonly<Record<string, number>> {
    return this.alarmAt;
  }

  get restartOnBoot(): readonly string[] {
    return this.bootIds;
  }

  // ---------- changes ----------

  add(rec: ActorRecord): Promise<void> {
    this.records.set(rec.actor_id, rec);
    this.indexRecord(rec);
    return this.change(rec);
  }

  /** `rec` (a record of this index) was changed in place: persist it. */
  update(rec: ActorRecord): Promise<void> {
    return this.change(rec);
  }

  markDestroyed(rec: ActorRecord): Promise<void> {
    this.unindexLive(rec);
    if (rec.actor_id in this.alarmAt) {
      delete this.alarmAt[rec.actor_id];
      this.pendingAlarms.set(rec.actor_id, null);
    }
    return this.change(rec);
  }

  /** Set (or clear) an actor's next alarm: null when it did not change, else its write. */
  setAlarm(id: string, at: number | null): Promise<void> | null {
    const cur = this.alarmAt[id];
    if (at === null) {
      if (cur === undefined) return null;
      delete this.alarmAt[id];
    } else {
      if (cur === at) return null;
      this.alarmAt[id] = at;
    }
    this.pendingAlarms.set(id, at);
    return this.scheduleWrite();
  }

  setRestartOnBoot(ids: string[]): Promise<void> {
    this.bootIds = ids;
    this.pendingBoot = ids;
    return this.scheduleWrite();
  }

  /** Wait for the last write asked for (its failure was reported to whoever asked for it). */
  async flushed(): Promise<void> {
    await (this.pendingWrite ?? this.lastWrite)?.catch(() => undefined);
  }

  /** Write what is pending, let a compaction finish, and close the journal. */
  async close(): Promise<void> {
    await this.flushed();
    await this.compacting?.catch(() => undefined);
    // The next start reads one snapshot instead of replaying a long journal.
    if (this.journalBytes > CLOSE_COMPACT_BYTES) await this.compactNow().catch(() => undefined);
    this.closed = true;
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }

  private change(rec: ActorRecord): Promise<void> {
    this.pendingRecs.add(rec);
    return this.scheduleWrite();
  }

  /** One append per event-loop turn for every change asked for in it. */
  private scheduleWrite(): Promise<void> {
    if (this.pendingWrite) return this.pendingWrite;
    const p = new Promise<void>((resolve, reject) => {
      setImmediate(() => {
        this.pendingWrite = null;
        try {
          this.append();
          resolve();
        } catch (error) {
          reject(error);
        }
      });
    });
    this.pendingWrite = p;
    this.lastWrite = p;
    return p;
  }

  private append(): void {
    if (this.closed) throw new AgentError("daemon.stopping", "the actor index is closed");
    let text = "";
    for (const rec of this.pendingRecs) text += JSON.stringify(["r", rec]) + "\n";
    for (const [id, at] of this.pendingAlarms) text += JSON.stringify(["a", id, at]) + "\n";
    if (this.pendingBoot) text += JSON.stringify(["b", this.pendingBoot]) + "\n";
    this.pendingRecs = new Set();
    this.pendingAlarms = new Map();
    this.pendingBoot = null;
    if (!text) return;
    const buf = Buffer.from(text);
    let off = 0;
    while (off < buf.length) off += writeSync(this.fd, buf, off);
    // One fsync for every record of this turn (storage.durability: power).
    syncFd(this.fd);
    this.journalBytes += buf.length;
    if (!this.compacting && this.journalBytes > Math.max(COMPACT_MIN_BYTES, this.snapshotBytes)) this.compactNow().catch(() => undefined);
  }

  // ---------- compaction ----------

  /**
   * Start the next journal, write a snapshot that names it as the first journal to replay
   * (chunk by chunk, the event loop running between chunks), then remove the older journals.
   * A crash at any point leaves a snapshot and the journals it needs.
   */
  private async compact(): Promise<void> {
    const dir = dirname(this.file);
    const oldGen = this.gen;
    const gen = oldGen + 1;
    const fd = openSync(join(dir, journalName(gen)), "a");
    // The new journal's name must survive a power cut before records are acknowledged in it.
    if (syncsWrites()) syncDirSync(dir);
    closeSync(this.fd);
    this.fd = fd;
    this.gen = gen;
    this.journalBytes = 0;
    let bytes = 0;
    const index = this;
    async function* chunks(): AsyncGenerator<string> {
      const head = `{"kind":"${SNAPSHOT_KIND}","schemaVersion":${SNAPSHOT_VERSION},"data":{"gen":${gen},"fields":${JSON.stringify(FIELDS)},"restartOnBoot":${JSON.stringify(index.bootIds)},"alarms":${JSON.stringify(Object.entries(index.alarmAt))},"records":[`;
      yield head;
      bytes += head.length;
      let rows: string[] = [];
      let first = true;
      for (const rec of index.records.values()) {
        rows.push(JSON.stringify(FIELDS.map((f) => rec[f] ?? null)));
        if (rows.length === SNAPSHOT_CHUNK) {
          const chunk = (first ? "" : ",") + rows.join(",");
          first = false;
          rows = [];
          bytes += chunk.length;
          yield chunk;
        }
      }
      const tail = (first || rows.length === 0 ? "" : ",") + rows.join(",") + "]}}";
      bytes += tail.length;
      yield tail;
    }
    await writeFileAtomicChunks(this.file, chunks());
    this.snapshotBytes = bytes;
    for (let g = oldGen; g >= 0; g--) {
      try {
        unlinkSync(join(dir, journalName(g)));
      } catch {
        break;
      }
    }
  }

  // ---------- loading ----------

  private async load(): Promise<void> {
    const dir = dirname(this.file);
    let snapshotGen = 0;
    let text: string | null = null;
    let hadSnapshot = false;
    let snapshotVersion1 = false;
    try {
      text = await readFile(this.file, "utf8");
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    }
    if (text !== null) {
      hadSnapshot = true;
      const g = this.loadSnapshot(text);
      snapshotVersion1 = g < 0;
      snapshotGen = Math.max(0, g);
      this.snapshotBytes = text.length;
      text = null;
    }
    let journals: number[] = [];
    try {
      journals = readdirSync(dir)
        .filter((n) => n.startsWith("index.journal."))
        .map((n) => Number(n.slice("index.journal.".length)))
        .filter((g) => Number.isInteger(g) && g >= 0)
        .sort((a, b) => a - b);
    } catch {}
    if (!hadSnapshot) {
      // No snapshot (first start, or it was lost): start from the actor files' record copies;
      // the journals, if any, are newer.
      for (const rec of await recordsFromActorFiles(dir)) this.setLoaded(rec);
    }
    for (const g of journals) {
      const path = join(dir, journalName(g));
      if (g < snapshotGen) {
        // Already in the snapshot (a compaction stopped before removing it).
        try {
          unlinkSync(path);
        } catch {}
        continue;
      }
      this.replay(readFileSync(path, "utf8"));
    }
    this.gen = Math.max(snapshotGen, journals.length ? journals[journals.length - 1]! : 0);
    this.fd = openSync(join(dir, journalName(this.gen)), "a");
    if (syncsWrites()) syncDirSync(dir);
    // Cut a torn last line, so the next append starts a line of its own.
    const size = fstatSync(this.fd).size;
    if (size > 0) {
      const tail = readFileSync(join(dir, journalName(this.gen)));
      const end = tail.lastIndexOf(10) + 1;
      if (end !== size) ftruncateSync(this.fd, end);
      this.journalBytes = end;
    }
    // Rebuilt, migrated or new: write a snapshot of this index now.
    if (!hadSnapshot || snapshotVersion1) await this.compactNow();
  }

  /** Compact now (at open, and at close when the journal grew): resolves once the snapshot is written. */
  private compactNow(): Promise<void> {
    if (!this.compacting) {
      this.compacting = this.compact().finally(() => {
        this.compacting = null;
      });
    }
    return this.compacting;
  }

  private loadSnapshot(text: string): number {
    let env: { kind?: unknown; schemaVersion?: unknown; data?: any };
    try {
      env = JSON.parse(text);
    } catch (error) {
      throw new AgentError(
        "store.corrupt",
        `${this.file} is not valid JSON (${(error as Error).message}); move it away to rebuild the index from the actor files`,
        { file: this.file },
      );
    }
    if (env?.kind !== SNAPSHOT_KIND)
      throw new AgentError("store.wrong_kind", `${this.file} holds a ${String(env?.kind)}, expected a ${SNAPSHOT_KIND}`, { file: this.file });
    const version = env.schemaVersion;
    if (typeof version !== "number" || version > SNAPSHOT_VERSION) {
      throw new AgentError(
        "store.version_too_new",
        `${this.file} was written by a newer version of agent (schema ${String(version)}); upgrade agent to open it`,
        { file: this.file },
      );
    }
    const data = env.data ?? {};
    if (version === 1) {
      // One JSON document of record objects (before the journal): read once, compacted later.
      for (const rec of Object.values(data.records ?? {}) as ActorRecord[]) this.setLoaded(rec);
      for (const [id, at] of Object.entries(data.alarms ?? {})) this.alarmAt[id] = at as number;
      this.bootIds = data.restartOnBoot ?? [];
      return -1;
    }
    const fields: string[] = data.fields;
    for (const row of data.records as unknown[][]) {
      const rec: Record<string, unknown> = {};
      for (let i = 0; i < fields.length; i++) rec[fields[i]!] = row[i];
      this.setLoaded(rec as unknown as ActorRecord);
    }
    for (const [id, at] of data.alarms as [string, number][]) this.alarmAt[id] = at;
    this.bootIds = data.restartOnBoot ?? [];
    return data.gen as number;
  }

  private replay(text: string): void {
    let start = 0;
    while (start < text.length) {
      const end = text.indexOf("\n", start);
      if (end < 0) break; // a torn last line: never acknowledged
      const line = text.slice(start, end);
      start = end + 1;
      let entry: Line;
      try {
        entry = JSON.parse(line);
      } catch {
        continue;
      }
      if (entry[0] === "r") this.setLoaded(entry[1]);
      else if (entry[0] === "a") {
        if (entry[2] === null) delete this.alarmAt[entry[1]];
        else this.alarmAt[entry[1]] = entry[2];
      } else if (entry[0] === "b") this.bootIds = entry[1];
    }
  }

  /** A record read from disk: replaces the one with its id (a newer line of the same actor). */
  private setLoaded(rec: ActorRecord): void {
    const prev = this.records.get(rec.actor_id);
    if (prev) {
      // Same identity (id, name, key never change): copy the fields into the held object.
      const wasLive = prev.destroy_ts === null;
      Object.assign(prev, rec);
      if (wasLive && prev.destroy_ts !== null) this.unindexLive(prev);
      return;
    }
    this.records.set(rec.actor_id, rec);
    this.indexRecord(rec);
  }

  private indexRecord(rec: ActorRecord): void {
    this.order.set(rec.actor_id, this.nextOrder++);
    if (rec.destroy_ts !== null) return;
    const nk = nameKey(rec.namespace_id, rec.name);
    let list = this.byName.get(nk);
    if (!list) this.byName.set(nk, (list = { ids: [], dead: 0 }));
    list.ids.push(rec.actor_id);
    this.byKey.set(liveKey(rec.namespace_id, rec.name, rec.key), rec.actor_id);
  }

  /** A destroyed actor leaves the key map at once and its name's list lazily (amortized O(1)). */
  private unindexLive(rec: ActorRecord): void {
    const k = liveKey(rec.namespace_id, rec.name, rec.key);
    if (this.byKey.get(k) === rec.actor_id) this.byKey.delete(k);
    const nk = nameKey(rec.namespace_id, rec.name);
    const list = this.byName.get(nk);
    if (!list) return;
    list.dead++;
    if (list.dead > 64 && list.dead * 2 > list.ids.length) {
      list.ids = list.ids.filter((id) => this.records.get(id)?.destroy_ts === null);
      list.dead = 0;
      if (list.ids.length === 0) this.byName.delete(nk);
    }
  }
}

async function recordsFromActorFiles(dir: string): Promise<ActorRecord[]> {
  const out: ActorRecord[] = [];
  let names: string[] = [];
  try {
    names = await readdir(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    if (!name.endsWith(".json") || basename(name) === "index.json") continue;
    try {
      const env = JSON.parse(await readFile(join(dir, name), "utf8")) as { kind?: string; data?: { record?: ActorRecord } };
      const rec = env.kind === "actor" ? env.data?.record : undefined;
      if (rec && typeof rec.actor_id === "string" && `${rec.actor_id}.json` === name)
        out.push({ ...rec, connectable_ts: null, sleep_ts: rec.sleep_ts ?? Date.now() });
    } catch {}
  }
  return out.sort((a, b) => a.create_ts - b.create_ts);
}
