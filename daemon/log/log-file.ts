/**
 * The one log writer: appends lines to a file, rotates it by size (`<file>.1` is the newest of
 * `keep` rotated files) and passes every line through the log redactor first (redact.ts), so a
 * secret never reaches a log, whoever's output the file holds. Used by the daemon's component
 * logs (logger.ts) and the kanban task logs (the worker-output relay, shared/log-relay.ts).
 *
 * Rotation renames: a follower (shared/log-follow.ts) sees the path name a new inode and drains
 * the old one first, so nothing written before the rotation is missed. Writes are synchronous
 * appends (small, and a crash right after a line must not lose it).
 */
import { appendFileSync, mkdirSync, renameSync, statSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import type { Redactor } from "./redact.js";

export interface LogFileOptions {
  /** Rotate when the file would grow past this many bytes. */
  maxBytes: number;
  /** Rotated files kept (`.1` … `.keep`). */
  keep: number;
  /** Every text written goes through it; null writes text as it is (already redacted). */
  redactor: Redactor | null;
}

export class LogFile {
  /** The file's size as this writer knows it (null: not looked at yet). */
  private size: number | null = null;

  constructor(
    readonly path: string,
    private options: LogFileOptions,
  ) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  }

  /** New limits (a config reload); they apply from the next write. */
  configure(limits: { maxBytes: number; keep: number }): void {
    this.options = { ...this.options, ...limits };
  }

  /**
   * Append `text` (whole lines, each ending in a newline, or a piece of one) after redacting it.
   * The file is rotated first when the text would make it outgrow `maxBytes`; a text of several
   * lines that is larger than what is left is written a line at a time, rotating in between (a
   * file is never rotated empty, so one line larger than the limit is still written whole).
   * Returns the text as written. A removed folder is made again; other write errors (a full
   * disk) throw: the caller decides whether that matters.
   */
  append(text: string): string {
    const out = this.options.redactor ? this.options.redactor.text(text) : text;
    const bytes = Buffer.byteLength(out);
    if (this.currentSize() + bytes <= this.options.maxBytes) {
      this.write(out, bytes);
      return out;
    }
    let at = 0;
    while (at < out.length) {
      const nl = out.indexOf("\n", at);
      const line = nl < 0 ? out.slice(at) : out.slice(at, nl + 1);
      at += line.length;
      const size = Buffer.byteLength(line);
      if (this.currentSize() > 0 && this.currentSize() + size > this.options.maxBytes) this.rotate();
      this.write(line, size);
    }
    return out;
  }

  private write(text: string, bytes: number): void {
    try {
      appendFileSync(this.path, text, { mode: 0o600 });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
      // The folder was removed while this writer ran (a clean-up): make it again, start a new file.
      mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
      this.size = 0;
      appendFileSync(this.path, text, { mode: 0o600 });
    }
    this.size = this.currentSize() + bytes;
  }

  /** Rotate now (a kanban task's new run starts a new file): `.keep` goes, each `.i` becomes `.i+1`, the file `.1`. No-op on a missing or empty file. */
  rotate(): void {
    if (this.currentSize() === 0) return;
    const { keep } = this.options;
    const path = this.path;
    if (keep < 1) {
      unlinkQuiet(path);
    } else {
      unlinkQuiet(`${path}.${keep}`);
      for (let i = keep - 1; i >= 1; i--) {
        try {
          renameSync(`${path}.${i}`, `${path}.${i + 1}`);
        } catch {}
      }
      try {
        renameSync(path, `${path}.1`);
      } catch {}
    }
    this.size = 0;
  }

  private currentSize(): number {
    if (this.size === null) {
      try {
        this.size = statSync(this.path).size;
      } catch {
        this.size = 0;
      }
    }
    return this.size;
  }
}

function unlinkQuiet(path: string): void {
  try {
    unlinkSync(path);
  } catch {}
}
