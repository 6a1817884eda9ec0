import { chmodSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { writeFileAtomicSync } from "../store/atomic-file.js";
import { Journal, jsonLine, parseJsonLines } from "../store/journal.js";
import type { DedupStore, InboundMessage } from "./adapter.js";

/** An inbound message as stored: which adapter it came through, and the message. */
export interface StoredInbound {
  /** `<platform>/<profile>/<eventId>`: the dedup key. */
  key: string;
  platform: string;
  profile: string;
  msg: InboundMessage;
}

type Line = { t: "in"; at: number; e: StoredInbound } | { t: "done"; k: string } | { t: "seen"; k: string; at: number };

/** Ids are remembered this long after they were seen (platforms redeliver within hours, not weeks). */
const SEEN_TTL_MS = 7 * 24 * 3600_000;
/** Folded (rewritten with only what is pending and remembered) past this many lines. */
const FOLD_LINES = 20_000;

/**
 * The inbound store: every event an adapter receives is appended here (and made durable) before
 * the adapter acknowledges it to the platform; it is marked done once handled. At start the
 * events not done are handed back for handling, so nothing a user sent is lost across a
 * restart. The same journal remembers event ids (and the adapters' own ids through `dedup`)
 * for a week, so a redelivered event is dropped, also after a restart.
 */
export class InboundStore {
  private journal: Journal;
  private readonly file: string;
  private readonly seenAt = new Map<string, number>();
  private readonly pending = new Map<string, StoredInbound>();

  constructor(dir: string) {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    this.file = join(dir, "inbound.jsonl");
    this.journal = new Journal(this.file, { mode: 0o600 });
  }

  /** Load the journal; returns the events not yet handled, oldest first. */
  load(now = Date.now()): StoredInbound[] {
    for (const line of parseJsonLines<Line>(this.journal.loadLines())) {
      if (line.t === "in") {
        this.seenAt.set(line.e.key, line.at);
        this.pending.set(line.e.key, line.e);
      } else if (line.t === "done") this.pending.delete(line.k);
      else this.seenAt.set(line.k, line.at);
    }
    this.fold(now);
    return [...this.pending.values()];
  }

  /** Store an event durably; `duplicate` when its key was seen before (nothing stored then). */
  async put(e: StoredInbound, now = Date.now()): Promise<{ duplicate: boolean }> {
    if (this.seenAt.has(e.key)) return { duplicate: true };
    this.seenAt.set(e.key, now);
    this.pending.set(e.key, e);
    this.journal.append(jsonLine({ t: "in", at: now, e } satisfies Line));
    await this.journal.durable();
    return { duplicate: false };
  }

  /** The event was handled (its turn ran, or it was refused). */
  done(key: string): void {
    if (!this.pending.delete(key)) return;
    this.journal.append(jsonLine({ t: "done", k: key } satisfies Line));
    if (this.journal.lines > FOLD_LINES) this.fold(Date.now());
  }

  /** A durable seen-set under a prefix (an adapter's own ids). */
  dedup(prefix: string): DedupStore {
    return {
      seen: async (id: string) => {
        const k = `${prefix}#${id}`;
        if (this.seenAt.has(k)) return true;
        const now = Date.now();
        this.seenAt.set(k, now);
        this.journal.append(jsonLine({ t: "seen", k, at: now } satisfies Line));
        await this.journal.durable();
        return false;
      },
    };
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  close(): void {
    this.journal.close(true);
  }

  /** Rewrite the journal with only the pending events and the ids still remembered. */
  private fold(now: number): void {
    const lines: string[] = [];
    for (const [k, at] of this.seenAt) {
      if (this.pending.has(k)) continue;
      if (now - at > SEEN_TTL_MS) this.seenAt.delete(k);
      else lines.push(JSON.stringify({ t: "seen", k, at } satisfies Line));
    }
    for (const e of this.pending.values()) lines.push(JSON.stringify({ t: "in", at: this.seenAt.get(e.key) ?? now, e } satisfies Line));
    // Replaced atomically: a crash leaves the old journal or the new one, never neither.
    this.journal.close();
    writeFileAtomicSync(this.file, lines.length ? `${lines.join("\n")}\n` : "");
    chmodSync(this.file, 0o600);
    this.journal = new Journal(this.file, { mode: 0o600 });
    this.journal.load();
  }
}
