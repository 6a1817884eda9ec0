/**
 * Durable writes of many small files (actor files, trace files), batched across actors. Every
 * write asked for in one event-loop turn is done together after it: a few on the main thread
 * (temp file + rename, the sync form of store/atomic-file.ts: for one hot actor the thread
 * round trip costs more than the write), more than that in a worker thread, so a turn that
 * touched hundreds of actors (64 clients over many actors, a sleep storm, a graceful stop)
 * costs the main thread one message instead of a `writeFileSync` + `renameSync` per file.
 * Each promise resolves once its file is renamed into place. The callers keep one write per
 * file at a time (the fixed temp name relies on it).
 */
import { existsSync } from "node:fs";
import { Worker } from "node:worker_threads";
import { AgentError } from "../../../shared/errors.js";
import { noteChanged, writeFileAtomicSync } from "../../store/atomic-file.js";
import { syncsWrites } from "../../store/durability.js";
import { threadScript } from "../../thread-script.js";
import { THREAD_YOUNG_GENERATION_MB } from "../../heap-policy.js";
import type { WriterBatch, WriterResult } from "./file-writer-thread.js";

/** Writes of one turn done on the main thread; above this the batch goes to the worker. */
const MAIN_THREAD_MAX = 4;
/** A file larger than this (chars) always goes to the worker. */
const MAIN_THREAD_MAX_CHARS = 256 * 1024;
/** Files per message to the worker. */
const WORKER_BATCH = 512;

interface Pending {
  file: string;
  /** The contents, made when the batch is written (null: nothing to write). */
  produce: () => string | null;
  text: string;
  resolve: () => void;
  reject: (error: Error) => void;
}

export class BatchFileWriter {
  private queue: Pending[] = [];
  private scheduled = false;
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly inWorker = new Map<number, Pending[]>();
  /** The last write asked for per file: the next one waits for it (one temp file per file). */
  private readonly perFile = new Map<string, Promise<void>>();

  /**
   * Replace `file` with what `produce` returns when the batch is written (after this turn,
   * with the other writes of the turn), so changes made until then share the write.
   */
  write(file: string, produce: () => string | null): Promise<void> {
    const prev = this.perFile.get(file);
    const enqueue = () =>
      new Promise<void>((resolve, reject) => {
        this.queue.push({ file, produce, text: "", resolve, reject });
        if (!this.scheduled) {
          this.scheduled = true;
          setImmediate(() => this.flush());
        }
      });
    const p = prev ? prev.then(enqueue, enqueue) : enqueue();
    this.perFile.set(file, p);
    const clear = () => {
      if (this.perFile.get(file) === p) this.perFile.delete(file);
    };
    p.then(clear, clear);
    return p;
  }

  /** Resolves once no write of `file` is queued or on its way (before removing it). */
  async settled(file: string): Promise<void> {
    for (let p = this.perFile.get(file); p; p = this.perFile.get(file)) await p.catch(() => undefined);
  }

  /** Whether a write of `file` is queued or on its way. */
  busy(file: string): boolean {
    return this.perFile.has(file);
  }

  private flush(): void {
    this.scheduled = false;
    const queued = this.queue;
    this.queue = [];
    const batch: Pending[] = [];
    let large = false;
    for (const p of queued) {
      let text: string | null;
      try {
        text = p.produce();
      } catch (error) {
        p.reject(error as Error);
        continue;
      }
      if (text === null) {
        p.resolve();
        continue;
      }
      p.text = text;
      if (text.length > MAIN_THREAD_MAX_CHARS) large = true;
      batch.push(p);
    }
    if (batch.length === 0) return;
    if (batch.length <= MAIN_THREAD_MAX && !large) {
      for (const p of batch) {
        try {
          writeFileAtomicSync(p.file, p.text);
          p.resolve();
        } catch (error) {
          p.reject(error as Error);
        }
      }
      return;
    }
    let worker: Worker;
    try {
      worker = this.ensureWorker();
    } catch (error) {
      for (const p of batch) p.reject(error as Error);
      return;
    }
    const sync = syncsWrites();
    for (let i = 0; i < batch.length; i += WORKER_BATCH) {
      const part = batch.slice(i, i + WORKER_BATCH);
      const id = this.nextId++;
      const items: string[] = [];
      for (const p of part) items.push(p.file, p.text);
      this.inWorker.set(id, part);
      worker.postMessage({ id, items, sync } satisfies WriterBatch);
    }
    worker.ref();
  }

  private ensureWorker(): Worker {
    if (this.worker) return this.worker;
    const script = threadScript(import.meta.url, "file-writer-thread.js");
    if (!existsSync(script)) throw new Error(`the file writer thread is not built (${script}); run npm run build`);
    const worker = new Worker(script, { resourceLimits: { maxYoungGenerationSizeMb: THREAD_YOUNG_GENERATION_MB } });
    worker.on("message", ({ id, errors }: WriterResult) => {
      const part = this.inWorker.get(id);
      this.inWorker.delete(id);
      if (!part) return;
      const failed = new Map(errors.map(([i, message, code]) => [i, { message, code }]));
      part.forEach((p, i) => {
        const error = failed.get(i);
        if (error === undefined) {
          noteChanged(p.file);
          p.resolve();
        }
        // A storage error (disk full, ...) keeps its code across the thread boundary.
        else p.reject(error.code ? AgentError.received(error.code, error.message, { file: p.file }) : new Error(error.message));
      });
      // Idle: it must not keep the process alive.
      if (this.inWorker.size === 0) worker.unref();
    });
    worker.on("error", (error) => this.workerLost(error));
    worker.on("exit", () => this.workerLost(new Error("the file writer thread exited")));
    worker.unref();
    this.worker = worker;
    return worker;
  }

  /** The worker died: fail what it held (those writes were not acknowledged); the next batch starts a new one. */
  private workerLost(error: Error): void {
    this.worker = null;
    for (const part of this.inWorker.values()) for (const p of part) p.reject(error);
    this.inWorker.clear();
  }
}

/** One per process: every actor's writes share its batches. */
export const batchFileWriter = new BatchFileWriter();
