/**
 * The one log follower: reads what is appended to a file as it grows, for `agent logs -f`, the
 * TUI's Logs view and `agent kanban log --follow` (in the daemon). It reads files, not the
 * daemon, so `agent logs -f` still works when the daemon is down or failed to start.
 *
 * It copes with what log writers do to a file (daemon/log/log-file.ts):
 * - rotation by rename: the path names a new inode; the rest of the old one is read first (lines
 *   written just before the rename are not lost), then any rotated file that came after it and
 *   was rotated away before this follower looked (`<file>.k-1` … `.1`, when the old one is now
 *   `<file>.k`), then the new file from its start;
 * - truncation in place: the file is smaller than where reading stopped; read from its start;
 * - a partial last line (a writer in the middle of a line): `onLines` gets it once it ends, and a
 *   multi-byte character cut between two reads is put back together;
 * - a missing file: followed once it appears, from its start.
 *
 * Polling (a `stat` every `intervalMs`), not `fs.watch`: it sees renames and truncations the
 * same way on every filesystem, and costs one `stat` a tick. `poll()` reads synchronously, so a
 * caller (or a test) can drive it without a timer.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";

export interface LogFollowOptions {
  /**
   * Where to start in the file as it is now: `"end"` (default: only what is appended from now),
   * `"start"`, a byte offset (past the end: the file was replaced, so from its start), or
   * `{ tailBytes }`: the whole lines within its last `tailBytes` bytes. A file that does not
   * exist yet is read from its start once it appears.
   */
  from?: "start" | "end" | number | { tailBytes: number };
  /** The text appended, as it comes (pieces of lines included). */
  onText?: (text: string) => void;
  /** The complete lines appended (without their newlines); a partial last line waits for its end. */
  onLines?: (lines: string[]) => void;
}

const CHUNK = 64 * 1024;
/** Rotated files looked at for ones a follower skipped (logs.keep is at most 100). */
const MAX_ROTATED = 100;

export class LogFollower {
  private fd: number | null = null;
  private ino = -1;
  private dev = -1;
  private pos = 0;
  private partial = "";
  private decoder = new StringDecoder("utf8");
  private timer: NodeJS.Timeout | null = null;
  private first = true;
  /** The rotated files there were when the current file was opened (older than it: never read as skipped). */
  private older = new Set<string>();
  private stopped = false;

  constructor(
    readonly path: string,
    private readonly options: LogFollowOptions,
  ) {}

  /** The byte offset reached in the file being read. */
  get position(): number {
    return this.pos;
  }

  /** Read what is new (rotations and truncations included); returns the bytes read. */
  poll(): number {
    if (this.stopped) return 0;
    let read = 0;
    if (this.fd === null) {
      if (!this.open()) return 0;
    }
    read += this.drain();
    let st: { ino: number; dev: number } | null = null;
    try {
      st = statSync(this.path);
    } catch {
      // Gone (rotated away and not recreated yet, or removed): keep the old one until a new file appears.
    }
    if (st && (st.ino !== this.ino || st.dev !== this.dev)) {
      // Rotated: what was written to the old inode just before the rename is still only there.
      read += this.drain();
      const old = { ino: this.ino, dev: this.dev };
      this.close();
      read += this.readSkipped(old);
      if (this.open()) read += this.drain();
    }
    return read;
  }

  /**
   * Files rotated out between two polls (a burst of lines rotated the file more than once): the
   * old file is now `<file>.k`; `.k-1` … `.1` came after it and were never read: read them whole.
   */
  private readSkipped(old: { ino: number; dev: number }): number {
    let k = 0;
    let found = false;
    for (let i = 1; i <= MAX_ROTATED; i++) {
      try {
        const st = statSync(`${this.path}.${i}`);
        k = i;
        if (st.ino === old.ino && st.dev === old.dev) {
          found = true;
          break;
        }
      } catch {
        break;
      }
    }
    // Not among them: it was rotated past `keep` and deleted, so the rotated files there came
    // after it, but for those that were there when it was opened (a file removed by hand).
    if (!found) k += 1;
    let read = 0;
    for (let j = k - 1; j >= 1; j--) {
      try {
        if (!found && this.older.has(signature(statSync(`${this.path}.${j}`)))) continue;
        this.fd = openSync(`${this.path}.${j}`, "r");
        this.pos = 0;
        read += this.drain();
      } catch {
        // Rotated away meanwhile: lost to this follower, as it is to the log.
      } finally {
        this.close();
      }
    }
    return read;
  }

  /** The signatures of the rotated files there are now. */
  private rotatedNow(): Set<string> {
    const out = new Set<string>();
    for (let i = 1; i <= MAX_ROTATED; i++) {
      try {
        out.add(signature(statSync(`${this.path}.${i}`)));
      } catch {
        break;
      }
    }
    return out;
  }

  /** Poll every `intervalMs` until `stop()`; the first poll runs now. */
  start(intervalMs = 150): this {
    if (this.timer || this.stopped) return this;
    this.pollQuietly();
    this.timer = setInterval(() => this.pollQuietly(), intervalMs);
    return this;
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.close();
  }

  private pollQuietly(): void {
    try {
      this.poll();
    } catch {
      // A read error (the file vanished between calls): the next tick looks again.
    }
  }

  private open(): boolean {
    let fd: number;
    try {
      fd = openSync(this.path, "r");
    } catch {
      this.first = false;
      return false;
    }
    const st = fstatSync(fd);
    this.fd = fd;
    this.ino = st.ino;
    this.older = this.rotatedNow();
    this.dev = st.dev;
    const from = this.first ? (this.options.from ?? "end") : "start";
    this.first = false;
    if (from === "start") this.pos = 0;
    else if (from === "end") this.pos = st.size;
    else if (typeof from === "number") this.pos = from >= 0 && from <= st.size ? from : 0;
    else this.pos = this.lineStartWithin(fd, st.size, from.tailBytes);
    return true;
  }

  /** The start of the first whole line within the last `bytes` bytes of the file. */
  private lineStartWithin(fd: number, size: number, bytes: number): number {
    const at = Math.max(0, size - Math.max(0, bytes));
    if (at === 0) return 0;
    // `at` starts a line when the byte before it is a newline; else the line starts after the next one.
    const buf = Buffer.alloc(CHUNK);
    for (let p = at - 1; p < size; ) {
      const n = readSync(fd, buf, 0, Math.min(CHUNK, size - p), p);
      if (n <= 0) break;
      const nl = buf.subarray(0, n).indexOf(0x0a);
      if (nl >= 0) return p + nl + 1;
      p += n;
    }
    return size;
  }

  private close(): void {
    if (this.fd !== null) {
      try {
        closeSync(this.fd);
      } catch {}
    }
    this.fd = null;
  }

  private drain(): number {
    if (this.fd === null) return 0;
    let read = 0;
    // Truncated in place: what is there now is new.
    if (fstatSync(this.fd).size < this.pos) {
      // Truncated in place: a line half read before it never ends; it is not glued to the next.
      this.pos = 0;
      this.partial = "";
      this.decoder = new StringDecoder("utf8");
    }
    const buf = Buffer.alloc(CHUNK);
    for (;;) {
      const n = readSync(this.fd, buf, 0, CHUNK, this.pos);
      if (n <= 0) break;
      this.pos += n;
      read += n;
      this.emit(this.decoder.write(buf.subarray(0, n)));
    }
    return read;
  }

  private emit(text: string): void {
    if (!text) return;
    this.options.onText?.(text);
    if (!this.options.onLines) return;
    const parts = (this.partial + text).split("\n");
    this.partial = parts.pop() ?? "";
    if (parts.length) this.options.onLines(parts);
  }
}

/** A file as this follower tells files apart: a reused inode number has another size or time. */
function signature(st: { ino: number; dev: number; size: number; mtimeMs: number }): string {
  return `${st.dev}:${st.ino}:${st.size}:${st.mtimeMs}`;
}

/**
 * The last `n` lines of a log (newest last) and where its current file ended when read (to
 * follow from there: `new LogFollower(file, { from: end })`). Reaches into the rotated files
 * (`.1`, `.2`, …) when the current one has fewer lines; reads backwards in chunks, so a large
 * file costs what the lines shown cost. Blank lines are left out.
 */
export function readLastLines(file: string, n: number): { lines: string[]; end: number } {
  const out: string[] = [];
  let end = 0;
  for (let i = 0; ; i++) {
    const path = i === 0 ? file : `${file}.${i}`;
    let fd: number;
    try {
      fd = openSync(path, "r");
    } catch {
      if (i === 0) continue;
      break;
    }
    try {
      const size = fstatSync(fd).size;
      if (i === 0) end = size;
      if (out.length < n) out.unshift(...lastLinesOf(fd, size, n - out.length));
    } finally {
      closeSync(fd);
    }
    if (out.length >= n) break;
  }
  return { lines: out, end };
}

function lastLinesOf(fd: number, size: number, n: number): string[] {
  let pos = size;
  let buffered = Buffer.alloc(0);
  let newlines = 0;
  // Until n + 1 newlines are in: the piece before the first may be the end of a longer line.
  while (pos > 0 && newlines <= n) {
    const len = Math.min(CHUNK, pos);
    pos -= len;
    const chunk = Buffer.alloc(len);
    readSync(fd, chunk, 0, len, pos);
    for (const b of chunk) if (b === 0x0a) newlines++;
    buffered = Buffer.concat([chunk, buffered]);
  }
  const lines = buffered.toString("utf8").split("\n");
  if (pos > 0) lines.shift();
  return lines.filter((l) => l.trim() !== "").slice(-n);
}
