import { readdir, readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { DocStore } from "../../store/doc-store.js";
import type { ActorKv } from "../types.js";

/**
 * An actor's user KV, hashed into bucket files: `<actor>.kv/<bucket>.json` with 256 buckets
 * (FNV-1a of the key bytes, low 8 bits). A put rewrites one bucket only, so its cost depends
 * on that bucket's size (about n/256 entries), not on the whole KV; buckets are created on
 * first use, so a small KV is a few small files. Keys are stored as hex (which sorts like the
 * bytes), values as base64. Writes go through DocStore (atomic rename, coalesced).
 */
export const KV_BUCKETS = 256;
const KIND = "actor-kv-bucket";

interface Bucket {
  entries: Record<string, string>;
}

export function toKeyBytes(key: string | Uint8Array): Uint8Array {
  return typeof key === "string" ? Buffer.from(key, "utf8") : key;
}

function bucketOf(key: Uint8Array): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) {
    h ^= key[i]!;
    h = Math.imul(h, 0x01000193);
  }
  return (h >>> 0) % KV_BUCKETS;
}

const bucketFile = (dir: string, n: number) => join(dir, `${n.toString(16).padStart(2, "0")}.json`);
const hex = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).toString("hex");

export class BucketedKv implements ActorKv {
  private readonly buckets = new Map<number, Promise<DocStore<Bucket>>>();

  constructor(readonly dir: string) {}

  private bucket(n: number): Promise<DocStore<Bucket>> {
    let b = this.buckets.get(n);
    if (!b) {
      b = DocStore.open<Bucket>({ file: bucketFile(this.dir, n), kind: KIND, version: 1, initial: () => ({ entries: {} }), rollBack: true });
      this.buckets.set(n, b);
      b.catch(() => this.buckets.delete(n));
    }
    return b;
  }

  async get(key: string | Uint8Array): Promise<Uint8Array | null> {
    const k = toKeyBytes(key);
    const doc = await this.bucket(bucketOf(k));
    const v = doc.data.entries[hex(k)];
    return v === undefined ? null : new Uint8Array(Buffer.from(v, "base64"));
  }

  async getJson<T = unknown>(key: string | Uint8Array): Promise<T | null> {
    const v = await this.get(key);
    return v === null ? null : (JSON.parse(Buffer.from(v).toString("utf8")) as T);
  }

  async put(key: string | Uint8Array, value: string | Uint8Array): Promise<void> {
    const k = toKeyBytes(key);
    const doc = await this.bucket(bucketOf(k));
    doc.data.entries[hex(k)] = Buffer.from(toKeyBytes(value)).toString("base64");
    await doc.write();
  }

  putJson(key: string | Uint8Array, value: unknown): Promise<void> {
    return this.put(key, JSON.stringify(value));
  }

  async delete(key: string | Uint8Array): Promise<void> {
    const k = toKeyBytes(key);
    const doc = await this.bucket(bucketOf(k));
    const h = hex(k);
    if (!(h in doc.data.entries)) return;
    delete doc.data.entries[h];
    await doc.writeAllowingEmpty();
  }

  async list(prefix?: string | Uint8Array): Promise<Array<{ key: Uint8Array; value: Uint8Array }>> {
    const p = prefix === undefined ? "" : hex(toKeyBytes(prefix));
    let names: string[] = [];
    try {
      names = await readdir(this.dir);
    } catch {}
    const numbers = new Set<number>(this.buckets.keys());
    for (const name of names) {
      const m = /^([0-9a-f]{2})\.json$/.exec(name);
      if (m) numbers.add(parseInt(m[1]!, 16));
    }
    const out: Array<[string, string]> = [];
    for (const n of numbers) {
      const doc = await this.bucket(n);
      for (const [k, v] of Object.entries(doc.data.entries)) if (k.startsWith(p)) out.push([k, v]);
    }
    out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    return out.map(([k, v]) => ({ key: new Uint8Array(Buffer.from(k, "hex")), value: new Uint8Array(Buffer.from(v, "base64")) }));
  }

  /** Read one key without opening stores (for KV reads of a sleeping actor). */
  static async readOnce(dir: string, key: Uint8Array): Promise<Uint8Array | null> {
    try {
      const env = JSON.parse(await readFile(bucketFile(dir, bucketOf(key)), "utf8")) as { data: Bucket };
      const v = env.data.entries[hex(key)];
      return v === undefined ? null : new Uint8Array(Buffer.from(v, "base64"));
    } catch {
      return null;
    }
  }

  static async remove(dir: string): Promise<void> {
    await rm(dir, { recursive: true, force: true });
  }
}
