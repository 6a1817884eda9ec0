import { readdir, readFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { DocStore } from "../../store/doc-store.js";
import type { ActorRecord } from "../types.js";

/**
 * The small index of every actor record (`data/actors/index.json`): the management API's view
 * (list, get, get-or-create matching) without opening actor files. In memory it is also
 * indexed by (namespace, name, key) for live actors and by (namespace, name) for listing, so no
 * call scans all actors. Destroyed actors stay as records (with destroy_ts) and are excluded
 * from lists. Written on lifecycle changes only (create, wake, sleep, destroy, alarms), never
 * per action.
 *
 * Every change names what changed (`add`, `update(rec)`, `markDestroyed`, `setAlarm`,
 * `setRestartOnBoot`) and resolves once it is durable; how it is stored (today: the whole
 * index as one DocStore file) stays inside this module.
 */
interface IndexData {
  records: Record<string, ActorRecord>;
  /** Next wake-up time per actor (scheduled actions, workflow sleeps), epoch ms. */
  alarms: Record<string, number>;
  /** Actors that were awake when the daemon stopped gracefully: woken again at start. */
  restartOnBoot: string[];
}

const liveKey = (ns: string, name: string, key: string) => `${ns}\u0000${name}\u0000${key}`;
const nameKey = (ns: string, name: string) => `${ns}\u0000${name}`;

export class ActorIndex {
  private readonly byKey = new Map<string, string>();
  private readonly byName = new Map<string, string[]>();
  /** The last write asked for (flushed() waits for it). */
  private lastWrite: Promise<void> | null = null;

  private constructor(private readonly doc: DocStore<IndexData>) {
    for (const rec of Object.values(doc.data.records)) this.indexRecord(rec);
  }

  static async open(file: string): Promise<ActorIndex> {
    const doc = await DocStore.open<IndexData>({ file, kind: "actor-index", version: 1, initial: () => ({ records: {}, alarms: {}, restartOnBoot: [] }) });
    doc.data.alarms ??= {};
    doc.data.restartOnBoot ??= [];
    if (!doc.existedOnOpen) {
      // No index (first start, or it was lost): rebuild it from the actor files' record copies.
      const found = await recordsFromActorFiles(dirname(file));
      if (found.length) {
        for (const rec of found) doc.data.records[rec.actor_id] = rec;
        await doc.write();
      }
    }
    return new ActorIndex(doc);
  }

  private indexRecord(rec: ActorRecord): void {
    const nk = nameKey(rec.namespace_id, rec.name);
    let ids = this.byName.get(nk);
    if (!ids) this.byName.set(nk, (ids = []));
    ids.push(rec.actor_id);
    if (rec.destroy_ts === null) this.byKey.set(liveKey(rec.namespace_id, rec.name, rec.key), rec.actor_id);
  }

  get(id: string): ActorRecord | undefined {
    return Object.hasOwn(this.doc.data.records, id) ? this.doc.data.records[id] : undefined;
  }

  findLive(ns: string, name: string, key: string): ActorRecord | undefined {
    const id = this.byKey.get(liveKey(ns, name, key));
    return id === undefined ? undefined : this.get(id);
  }

  all(): ActorRecord[] {
    return Object.values(this.doc.data.records);
  }

  idsByName(ns: string, name: string): readonly string[] {
    return this.byName.get(nameKey(ns, name)) ?? [];
  }

  private write(): Promise<void> {
    const p = this.doc.write();
    this.lastWrite = p;
    return p;
  }

  /** Wait for the last write asked for (its failure was reported to whoever asked for it). */
  async flushed(): Promise<void> {
    await this.lastWrite?.catch(() => undefined);
  }

  add(rec: ActorRecord): Promise<void> {
    this.doc.data.records[rec.actor_id] = rec;
    this.indexRecord(rec);
    return this.write();
  }

  /** `rec` (a record of this index) was changed in place: persist it. */
  update(_rec: ActorRecord): Promise<void> {
    return this.write();
  }

  markDestroyed(rec: ActorRecord): Promise<void> {
    const k = liveKey(rec.namespace_id, rec.name, rec.key);
    if (this.byKey.get(k) === rec.actor_id) this.byKey.delete(k);
    delete this.doc.data.alarms[rec.actor_id];
    return this.write();
  }

  alarms(): Record<string, number> {
    return this.doc.data.alarms;
  }

  /** Set (or clear) an actor's next alarm: null when it did not change, else its write. */
  setAlarm(id: string, at: number | null): Promise<void> | null {
    const cur = this.doc.data.alarms[id];
    if (at === null) {
      if (cur === undefined) return null;
      delete this.doc.data.alarms[id];
    } else {
      if (cur === at) return null;
      this.doc.data.alarms[id] = at;
    }
    return this.write();
  }

  get restartOnBoot(): readonly string[] {
    return this.doc.data.restartOnBoot;
  }

  setRestartOnBoot(ids: string[]): Promise<void> {
    this.doc.data.restartOnBoot = ids;
    return this.write();
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
    if (!name.endsWith(".json") || name === "index.json") continue;
    try {
      const env = JSON.parse(await readFile(join(dir, name), "utf8")) as { kind?: string; data?: { record?: ActorRecord } };
      const rec = env.kind === "actor" ? env.data?.record : undefined;
      if (rec && typeof rec.actor_id === "string" && `${rec.actor_id}.json` === name) out.push({ ...rec, connectable_ts: null, sleep_ts: rec.sleep_ts ?? Date.now() });
    } catch {}
  }
  return out.sort((a, b) => a.create_ts - b.create_ts);
}
