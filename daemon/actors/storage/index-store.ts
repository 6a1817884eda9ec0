import { readFileSync, unlinkSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { AgentError } from "../../../shared/errors.js";
import { writeFileAtomicChunks } from "../../store/atomic-file.js";
import { AfterTurn, Journal, journalGenerations } from "../../store/journal.js";
import type { ActorRecord } from "../types.js";
import { settleAll } from "./layout.js";

/**
 * The index of every actor record: the management API's view (list, get, get-or-create
 * matching), the next alarm per actor and the actors to wake at boot, without opening actor
 * files. Destroyed actors stay as records (with destroy_ts) and are excluded from lists.
 *
 * On disk (README "Design notes", actor index): in `data/actors/index/`, a snapshot
 * `index.json` plus an append-only journal `index.journal.<gen>`, one JSON line per change. Every change names what changed
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
 *
 * The snapshot has one record per line after a header line that holds what a start needs
 * without the records: the boot list, the alarms, the actors awake at the time, the names with
 * more than SMALL_GROUP live actors, and the records of the other names (a few boards, cron
 * tables: what other features look up while the daemon starts). So opening reads the header and
 * replays the (short) journal, and the other records are parsed afterwards, a chunk per turn,
 * once the daemon is ready (`loadInBackground`); a call that needs one of them before then
 * finishes the load first. It is still one JSON document.
 */
const SNAPSHOT_KIND = "actor-index";
const SNAPSHOT_VERSION = 3;
/** Snapshot rows parsed per turn by the background load. */
const LOAD_CHUNK = 4000;
/** The records are loaded in the background this long after open at the latest (else when the daemon is ready). */
const LOAD_FALLBACK_MS = 10_000;
/** A (namespace, name) with at most this many live actors has their records in the snapshot's header. */
const SMALL_GROUP = 32;
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

const nameKey = (ns: string, name: string) => `${ns}\u0000${name}`;
const JOURNAL_PREFIX = "index.journal.";
const journalName = (gen: number) => `${JOURNAL_PREFIX}${gen}`;

/** The ids of one (namespace, name) in creation order; destroyed ones are dropped lazily. */
interface NameList {
  ids: string[];
  dead: number;
  /**
   * The live actors by key. Keyed by the record's own key string, per name: one Map of
   * "ns\0name\0key" strings built for every actor cost 120 bytes each (a flat prefix and three
   * string ropes) on top of the key the record already holds: 12 MB at 100k actors (issue 31).
   */
  keys: Map<string, string>;
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
  private readonly byName = new Map<string, NameList>();
  private readonly alarmAt: Record<string, number> = Object.create(null);
  private bootIds: string[] = [];
  /** Live actors started and not asleep (running when the daemon went away). */
  private readonly awake = new Set<string>();

  /** The snapshot text whose rows are not parsed yet (v3), where its next row starts, its fields. */
  private snapText: string | null = null;
  private snapPos = 0;
  private snapFields: string[] = [];
  private snapSameFields = false;
  /** Journal records to apply after the snapshot rows. */
  private journalRecs: ActorRecord[] = [];
  private loaded = true;
  private loadError: Error | null = null;
  /** Actors the journal destroyed while the records are not loaded (for the boot list). */
  private readonly destroyedInJournal = new Set<string>();
  /** While not loaded: the (namespace, name)s not all in memory yet, and the records that are (final). */
  private readonly bigNames = new Set<string>();
  private readonly preloaded = new Set<string>();
  private backgroundLoad: Promise<void> | null = null;

  /** The current generation of the journal (the older ones are in the snapshot or replayed at load). */
  private journal: Journal | null = null;
  private gen = 0;
  private snapshotBytes = 0;
  /** Changes of this event-loop turn, appended together. */
  private pendingRecs = new Set<ActorRecord>();
  private pendingAlarms = new Map<string, number | null>();
  private pendingBoot: string[] | null = null;
  /** One append per event-loop turn for every change asked for in it (group commit). */
  private readonly turnWrite = new AfterTurn(() => this.append());
  private compacting: Promise<void> | null = null;
  private closed = false;

  private constructor(
    private readonly file: string,
    /** Where the actor files are (their shard folders), read when there is no snapshot. */
    private readonly dataDir: string,
  ) {}

  /** Open the index whose snapshot is `file` (its journals next to it). */
  static async open(file: string, dataDir: string = dirname(file)): Promise<ActorIndex> {
    const index = new ActorIndex(file, dataDir);
    await index.load();
    return index;
  }

  // ---------- reading ----------

  get size(): number {
    this.ensureLoaded();
    return this.records.size;
  }

  get(id: string): ActorRecord | undefined {
    if (!this.loaded && !this.records.has(id)) this.ensureLoaded();
    return this.records.get(id);
  }

  findLive(ns: string, name: string, key: string): ActorRecord | undefined {
    this.ensureName(ns, name);
    const id = this.byName.get(nameKey(ns, name))?.keys.get(key);
    return id === undefined ? undefined : this.records.get(id);
  }

  /** Every record (destroyed ones too), in creation order. */
  all(): IterableIterator<ActorRecord> {
    this.ensureLoaded();
    return this.records.values();
  }

  /** The live ids of (namespace, name) in creation order (may hold destroyed ids: check the record). */
  idsByName(ns: string, name: string): readonly string[] {
    this.ensureName(ns, name);
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

  /**
   * The live actors to wake at start: awake when the daemon went away (running, or waiting to be
   * restarted after a crash), or on the boot list (awake at a graceful stop). Known without the
   * records (see the class comment).
   */
  toWakeAtBoot(): string[] {
    const out = new Set(this.awake);
    for (const id of this.bootIds) {
      const rec = this.records.get(id);
      if (rec ? rec.destroy_ts === null : !this.loaded && !this.destroyedInJournal.has(id)) out.add(id);
    }
    return [...out];
  }

  /** Parse the records in the background now (a chunk per turn); resolves once they are loaded. */
  loadInBackground(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    this.backgroundLoad ??= (async () => {
      while (!this.loaded && !this.closed) {
        this.loadRows(LOAD_CHUNK);
        await new Promise((r) => setImmediate(r));
      }
    })();
    return this.backgroundLoad;
  }

  // ---------- changes ----------

  add(rec: ActorRecord): Promise<void> {
    this.ensureName(rec.namespace_id, rec.name);
    if (!this.loaded) this.preloaded.add(rec.actor_id);
    this.records.set(rec.actor_id, rec);
    this.indexRecord(rec);
    return this.change(rec);
  }

  /** `rec` (a record of this index) was changed in place: persist it. */
  update(rec: ActorRecord): Promise<void> {
    if (!this.loaded && !this.records.has(rec.actor_id)) this.ensureLoaded();
    return this.change(rec);
  }

  markDestroyed(rec: ActorRecord): Promise<void> {
    if (!this.loaded && !this.records.has(rec.actor_id)) this.ensureLoaded();
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
    await this.turnWrite.last?.catch(() => undefined);
  }

  /** Write what is pending, let a compaction finish, and close the journal. */
  async close(): Promise<void> {
    await this.flushed();
    await this.compacting?.catch(() => undefined);
    // The next start reads one snapshot instead of replaying a long journal.
    if ((this.journal?.bytes ?? 0) > CLOSE_COMPACT_BYTES) await this.compactNow().catch(() => undefined);
    this.closed = true;
    this.journal?.close(true);
  }

  private change(rec: ActorRecord): Promise<void> {
    this.trackAwake(rec);
    this.pendingRecs.add(rec);
    return this.scheduleWrite();
  }

  private scheduleWrite(): Promise<void> {
    return this.turnWrite.request();
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
    const journal = this.journal!;
    journal.append(text);
    // One fsync for every record of this turn (storage.durability: power), before they are acknowledged.
    journal.sync();
    if (!this.compacting && journal.bytes > Math.max(COMPACT_MIN_BYTES, this.snapshotBytes)) this.compactNow().catch(() => undefined);
  }

  // ---------- compaction ----------

  /**
   * Start the next journal, write a snapshot that names it as the first journal to replay
   * (chunk by chunk, the event loop running between chunks), then remove the older journals.
   * A crash at any point leaves a snapshot and the journals it needs.
   */
  private async compact(): Promise<void> {
    this.ensureLoaded();
    const dir = dirname(this.file);
    const oldGen = this.gen;
    const gen = oldGen + 1;
    // Its name survives a power cut before records are acknowledged in it.
    const next = Journal.startGeneration(dir, JOURNAL_PREFIX, gen);
    this.journal?.close(true);
    this.journal = next;
    this.gen = gen;
    let bytes = 0;
    const index = this;
    async function* chunks(): AsyncGenerator<string> {
      // What a start needs without the records: the actors awake as the records say, and the
      // boot list of live actors only.
      const awake: string[] = [];
      const groups = new Map<string, ActorRecord[]>();
      for (const r of index.records.values()) {
        if (r.destroy_ts !== null) continue;
        if (r.start_ts !== null && r.sleep_ts === null) awake.push(r.actor_id);
        const nk = nameKey(r.namespace_id, r.name);
        const g = groups.get(nk);
        if (!g) groups.set(nk, [r]);
        else if (g.length <= SMALL_GROUP) g.push(r);
      }
      const big: string[][] = [];
      const small: unknown[][] = [];
      for (const g of groups.values()) {
        if (g.length > SMALL_GROUP) big.push([g[0]!.namespace_id, g[0]!.name]);
        else for (const r of g) small.push(FIELDS.map((f) => r[f] ?? null));
      }
      const boot = index.bootIds.filter((id) => index.records.get(id)?.destroy_ts === null);
      const head = `{"kind":"${SNAPSHOT_KIND}","schemaVersion":${SNAPSHOT_VERSION},"data":{"gen":${gen},"fields":${JSON.stringify(FIELDS)},"restartOnBoot":${JSON.stringify(boot)},"alarms":${JSON.stringify(Object.entries(index.alarmAt))},"awake":${JSON.stringify(awake)},"big":${JSON.stringify(big)},"small":${JSON.stringify(small)},"records":[\n`;
      yield head;
      bytes += head.length;
      let rows: string[] = [];
      let first = true;
      for (const rec of index.records.values()) {
        rows.push(JSON.stringify(FIELDS.map((f) => rec[f] ?? null)));
        if (rows.length === SNAPSHOT_CHUNK) {
          const chunk = (first ? "" : ",\n") + rows.join(",\n");
          first = false;
          rows = [];
          bytes += chunk.length;
          yield chunk;
        }
      }
      const tail = (first || rows.length === 0 ? "" : ",\n") + rows.join(",\n") + "\n]}}";
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
    let olderFormat = false;
    if (text !== null) {
      hadSnapshot = true;
      const nl = text.indexOf("\n");
      // One record per line (v3): the records are parsed later; else one line (v1, v2): now.
      const g = nl >= 0 ? this.openSnapshot(text, nl) : this.loadSnapshot(text);
      snapshotVersion1 = g < 0;
      olderFormat = nl < 0;
      snapshotGen = Math.max(0, g);
      this.snapshotBytes = text.length;
      text = null;
    }
    const journals = journalGenerations(dir, JOURNAL_PREFIX);
    if (!hadSnapshot) {
      // No snapshot (first start, or it was lost): start from the actor files' record copies;
      // the journals, if any, are newer.
      for (const rec of await recordsFromActorFiles(this.dataDir)) this.setLoaded(rec);
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
      if (g === journals[journals.length - 1]) continue;
      this.replay(readFileSync(path, "utf8"));
    }
    this.gen = Math.max(snapshotGen, journals.length ? journals[journals.length - 1]! : 0);
    // The newest generation takes the appends; loading it cuts a torn last line, so the next
    // append starts a line of its own.
    this.journal = new Journal(join(dir, journalName(this.gen)));
    this.replay(this.journal.load().toString("utf8"));
    this.journal.open();
    // Rebuilt, migrated or new: write a snapshot of this index now.
    if (!hadSnapshot || snapshotVersion1) await this.compactNow();
    // A snapshot of the one-line format: rewritten in the background, so the next start is lazy.
    else if (olderFormat) this.compactNow().catch(() => undefined);
  }

  /** Check a snapshot's envelope (kind and version). */
  private checkEnvelope(env: { kind?: unknown; schemaVersion?: unknown }): number {
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
    return version;
  }

  private corrupt(detail: string): AgentError {
    return new AgentError("store.corrupt", `${this.file} is not valid JSON (${detail}); move it away to rebuild the index from the actor files`, {
      file: this.file,
    });
  }

  /** A snapshot of one record per line: read its header line now, its records later. */
  private openSnapshot(text: string, nl: number): number {
    let env: { kind?: unknown; schemaVersion?: unknown; data?: any };
    try {
      env = JSON.parse(`${text.slice(0, nl)}]}}`);
    } catch (error) {
      throw this.corrupt((error as Error).message);
    }
    this.checkEnvelope(env);
    // Written whole by an atomic rename: a snapshot that does not end as written is damaged.
    if (!text.endsWith("\n]}}")) throw this.corrupt("it ends early");
    const data = env.data ?? {};
    for (const [id, at] of data.alarms as [string, number][]) this.alarmAt[id] = at;
    this.bootIds = data.restartOnBoot ?? [];
    for (const id of data.awake ?? []) this.awake.add(id);
    this.snapFields = data.fields;
    this.snapSameFields = this.snapFields.length === FIELDS.length && FIELDS.every((name, i) => this.snapFields[i] === name);
    for (const [ns, name] of data.big ?? []) this.bigNames.add(nameKey(ns, name));
    for (const row of data.small ?? []) {
      const rec = this.rowRecord(row);
      this.setLoaded(rec, false);
      this.preloaded.add(rec.actor_id);
    }
    this.snapText = text;
    this.snapPos = nl + 1;
    this.loaded = false;
    setTimeout(() => void this.loadInBackground().catch(() => undefined), LOAD_FALLBACK_MS).unref();
    return data.gen as number;
  }

  /** Parse up to `max` more snapshot rows; the last ones also apply the journal's records. */
  private loadRows(max: number): void {
    if (this.loaded) return;
    const text = this.snapText!;
    const from = this.snapPos;
    let end = from;
    for (let n = 0; n < max; n++) {
      const nl = text.indexOf("\n", end);
      if (nl < 0) break;
      end = nl + 1;
    }
    this.snapPos = end;
    let chunk = text.slice(from, end).trimEnd();
    if (chunk.endsWith(",")) chunk = chunk.slice(0, -1);
    if (chunk) {
      let rows: unknown[][];
      try {
        rows = JSON.parse(`[${chunk}]`);
      } catch (error) {
        this.loadError = this.corrupt((error as Error).message);
        throw this.loadError;
      }
      const pre = this.preloaded;
      for (const row of rows) if (!pre.has(row[0] as string)) this.setLoaded(this.rowRecord(row), false);
    }
    if (text.indexOf("\n", end) >= 0) return;
    // What is left is the closing line: every row is in; the journal is newer.
    this.snapText = null;
    for (const rec of this.journalRecs) this.setLoaded(rec);
    this.journalRecs = [];
    this.destroyedInJournal.clear();
    this.bigNames.clear();
    this.preloaded.clear();
    this.loaded = true;
  }

  private rowRecord(row: unknown[]): ActorRecord {
    return this.snapSameFields ? recordOfRow(row) : recordOfFields(this.snapFields, row);
  }

  /** Load the records now unless every record of (ns, name) is in memory already. */
  private ensureName(ns: string, name: string): void {
    if (!this.loaded && this.bigNames.has(nameKey(ns, name))) this.ensureLoaded();
  }

  /** Load the records now if they are not (a call that needs them before the background load did). */
  private ensureLoaded(): void {
    if (this.loaded) return;
    if (this.loadError) throw this.loadError;
    while (!this.loaded) this.loadRows(Number.MAX_SAFE_INTEGER);
  }

  /** Whether `rec` counts as awake at the last run's end (live, started, not asleep). */
  private trackAwake(rec: ActorRecord): void {
    if (rec.destroy_ts === null && rec.start_ts !== null && rec.sleep_ts === null) this.awake.add(rec.actor_id);
    else this.awake.delete(rec.actor_id);
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
    const version = this.checkEnvelope(env);
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
      if (entry[0] === "r") {
        if (this.loaded) this.setLoaded(entry[1]);
        else if (this.preloaded.has(entry[1].actor_id) || !this.bigNames.has(nameKey(entry[1].namespace_id, entry[1].name))) {
          // A name whose records are all in memory: applied now.
          this.setLoaded(entry[1]);
          this.preloaded.add(entry[1].actor_id);
        } else {
          // Applied after the snapshot's rows; what a start needs is kept now.
          this.journalRecs.push(entry[1]);
          this.trackAwake(entry[1]);
          if (entry[1].destroy_ts !== null) this.destroyedInJournal.add(entry[1].actor_id);
        }
      } else if (entry[0] === "a") {
        if (entry[2] === null) delete this.alarmAt[entry[1]];
        else this.alarmAt[entry[1]] = entry[2];
      } else if (entry[0] === "b") this.bootIds = entry[1];
    }
  }

  /** A record read from disk: replaces the one with its id (a newer line of the same actor). */
  private setLoaded(rec: ActorRecord, track = true): void {
    if (track) this.trackAwake(rec);
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
    if (!list) this.byName.set(nk, (list = { ids: [], dead: 0, keys: new Map() }));
    list.ids.push(rec.actor_id);
    list.keys.set(rec.key, rec.actor_id);
  }

  /** A destroyed actor leaves the key map at once and its name's list lazily (amortized O(1)). */
  private unindexLive(rec: ActorRecord): void {
    const nk = nameKey(rec.namespace_id, rec.name);
    const list = this.byName.get(nk);
    if (!list) return;
    if (list.keys.get(rec.key) === rec.actor_id) list.keys.delete(rec.key);
    list.dead++;
    if (list.dead > 64 && list.dead * 2 > list.ids.length) {
      list.ids = list.ids.filter((id) => this.records.get(id)?.destroy_ts === null);
      list.dead = 0;
      if (list.ids.length === 0) this.byName.delete(nk);
    }
  }
}

/** A snapshot row in the order of FIELDS: one object shape for every record. */
function recordOfRow(r: unknown[]): ActorRecord {
  return {
    actor_id: r[0],
    name: r[1],
    key: r[2],
    namespace_id: r[3],
    runner_name_selector: r[4],
    crash_policy: r[5],
    datacenter: r[6],
    create_ts: r[7],
    connectable_ts: r[8],
    destroy_ts: r[9],
    sleep_ts: r[10],
    start_ts: r[11],
    error: r[12],
  } as ActorRecord;
}

/** A snapshot row of other fields (an older or newer field list). */
function recordOfFields(fields: string[], row: unknown[]): ActorRecord {
  const rec: Record<string, unknown> = {};
  for (let i = 0; i < fields.length; i++) rec[fields[i]!] = row[i];
  return rec as unknown as ActorRecord;
}

/** The record copies of every actor file in the shard folders of `dataDir` (layout.ts). */
async function recordsFromActorFiles(dataDir: string): Promise<ActorRecord[]> {
  const out: ActorRecord[] = [];
  settleAll(dataDir);
  let shards: string[] = [];
  try {
    shards = (await readdir(dataDir)).filter((n) => /^[0-9a-f]{2}$/.test(n));
  } catch {
    return out;
  }
  for (const shard of shards) {
    const dir = join(dataDir, shard);
    let names: string[] = [];
    try {
      names = await readdir(dir);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!name.endsWith(".json")) continue;
      try {
        const env = JSON.parse(await readFile(join(dir, name), "utf8")) as { kind?: string; data?: { record?: ActorRecord } };
        const rec = env.kind === "actor" ? env.data?.record : undefined;
        if (rec && typeof rec.actor_id === "string" && `${rec.actor_id}.json` === name)
          out.push({ ...rec, connectable_ts: null, sleep_ts: rec.sleep_ts ?? Date.now() });
      } catch {}
    }
  }
  return out.sort((a, b) => a.create_ts - b.create_ts);
}
