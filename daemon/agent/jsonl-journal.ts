import { closeSync, mkdirSync, openSync, readFileSync, truncateSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { writeFileAtomicSync } from "../store/atomic-file.js";
import { syncFd } from "../store/durability.js";
import { toStorageError } from "../store/storage-error.js";

/**
 * An append-only file of JSON lines beside a snapshot: a change costs one short append, whatever
 * the size of the snapshot. An append is on disk (page cache; fsynced under `storage.durability:
 * power`) when `append` returns, so it survives `kill -9`. A torn last line was never
 * acknowledged: reading cuts it off. The owner folds the lines into its snapshot and `reset`s.
 */
export class JsonlJournal<L> {
  private fd: number | null = null;
  /** Lines in the file. */
  lines = 0;

  constructor(readonly file: string) {}

  /** Every complete line, in order. */
  read(): L[] {
    let text: string;
    try {
      text = readFileSync(this.file, "utf8");
    } catch {
      return [];
    }
    if (text && !text.endsWith("\n")) {
      text = text.slice(0, text.lastIndexOf("\n") + 1);
      truncateSync(this.file, Buffer.byteLength(text));
    }
    const out: L[] = [];
    this.lines = 0;
    for (const raw of text.split("\n")) {
      if (!raw) continue;
      this.lines++;
      try {
        out.push(JSON.parse(raw) as L);
      } catch {
        // A line is written whole or torn at the end; anything else is not ours: skip it.
      }
    }
    return out;
  }

  append(line: L): void {
    try {
      if (this.fd === null) {
        mkdirSync(dirname(this.file), { recursive: true });
        this.fd = openSync(this.file, "a", 0o600);
      }
      writeSync(this.fd, `${JSON.stringify(line)}\n`);
      syncFd(this.fd);
    } catch (error) {
      throw toStorageError(error, this.file);
    }
    this.lines++;
  }

  /** Drop the first `n` lines (they are in the snapshot now); later ones stay. */
  dropFirst(n: number): void {
    try {
      if (n >= this.lines) {
        truncateSync(this.file, 0);
        this.lines = 0;
        return;
      }
      // Lines were appended while the snapshot was written: keep those (rare, small).
      const rest = readFileSync(this.file, "utf8").split("\n").filter(Boolean).slice(n);
      this.close();
      writeFileAtomicSync(this.file, rest.map((l) => `${l}\n`).join(""));
      this.lines = rest.length;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw toStorageError(error, this.file);
      this.lines = 0;
    }
  }

  /** Keep only the lines `keep` accepts (rewritten in place, atomically). */
  retain(keep: (line: L) => boolean): void {
    const kept = this.read().filter(keep);
    this.close();
    try {
      if (kept.length || this.lines) writeFileAtomicSync(this.file, kept.map((l) => `${JSON.stringify(l)}\n`).join(""));
    } catch (error) {
      throw toStorageError(error, this.file);
    }
    this.lines = kept.length;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
