import { appendFileSync, mkdirSync, renameSync, statSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { Redactor } from "./redact.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
const LEVELS: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  /** A logger writing to another component's file. */
  component(name: string): Logger;
}

export interface LogOptions {
  dir: string;
  level?: LogLevel;
  /** Rotate a component's file when it grows past this many bytes. */
  maxBytes?: number;
  /** Rotated files kept per component (`<c>.log.1` is the newest). */
  keep?: number;
  /** Also write each line to stderr (set when running under systemd or in the foreground). */
  mirror?: ((line: string, level: LogLevel) => void) | null;
}

export const LOG_DEFAULTS = Object.freeze({ level: "info" as LogLevel, maxBytes: 5 * 1024 * 1024, keep: 3 });

/**
 * One JSON-lines file per component under `$AGENT_HOME/logs/`. Writes are synchronous appends
 * (small, and a crash right after a log line must not lose it); rotation is by size.
 */
export class FileLogSink {
  private readonly sizes = new Map<string, number>();
  /** Every line goes through it before it is written anywhere (redact.ts). */
  readonly redactor = new Redactor();
  readonly options: Required<Omit<LogOptions, "mirror">> & { mirror: LogOptions["mirror"] };

  constructor(options: LogOptions) {
    this.options = { ...LOG_DEFAULTS, mirror: null, ...options };
    mkdirSync(this.options.dir, { recursive: true, mode: 0o700 });
  }

  /** Apply the `logs.*` config (at start and after every reload). */
  configure(settings: { level: LogLevel; max_bytes: number; keep: number }): void {
    this.options.level = settings.level;
    this.options.maxBytes = settings.max_bytes;
    this.options.keep = settings.keep;
  }

  isEnabled(level: LogLevel): boolean {
    return LEVELS[level] >= LEVELS[this.options.level];
  }

  logger(component: string): Logger {
    const write = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => this.write(component, level, msg, fields);
    return {
      debug: (m, f) => write("debug", m, f),
      info: (m, f) => write("info", m, f),
      warn: (m, f) => write("warn", m, f),
      error: (m, f) => write("error", m, f),
      component: (name) => this.logger(name),
    };
  }

  write(component: string, level: LogLevel, msg: string, fields?: Record<string, unknown>): void {
    if (LEVELS[level] < LEVELS[this.options.level]) return;
    const record = { ts: new Date().toISOString(), level, component, msg, ...serializeFields(fields, this.redactor) };
    const line = this.redactor.text(JSON.stringify(record)) + "\n";
    const file = join(this.options.dir, `${component}.log`);
    try {
      this.rotateIfNeeded(component, file, Buffer.byteLength(line));
      appendFileSync(file, line, { mode: 0o600 });
      this.sizes.set(component, (this.sizes.get(component) ?? 0) + Buffer.byteLength(line));
    } catch {
      // Logging must never take the daemon down (full disk, removed folder).
    }
    this.options.mirror?.(line.trimEnd(), level);
  }

  private rotateIfNeeded(component: string, file: string, incoming: number): void {
    let size = this.sizes.get(component);
    if (size === undefined) {
      try {
        size = statSync(file).size;
      } catch {
        size = 0;
      }
      this.sizes.set(component, size);
    }
    if (size + incoming <= this.options.maxBytes) return;
    const { keep } = this.options;
    try {
      unlinkSync(`${file}.${keep}`);
    } catch {}
    for (let i = keep - 1; i >= 1; i--) {
      try {
        renameSync(`${file}.${i}`, `${file}.${i + 1}`);
      } catch {}
    }
    try {
      renameSync(file, `${file}.1`);
    } catch {}
    this.sizes.set(component, 0);
  }
}

function serializeFields(fields: Record<string, unknown> | undefined, redactor: Redactor): Record<string, unknown> {
  if (!fields) return {};
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] = value instanceof Error ? { name: value.name, message: value.message, stack: value.stack, code: (value as { code?: unknown }).code } : value;
  }
  return redactor.fields(out) as Record<string, unknown>;
}

/** A logger that drops everything: for unit tests of modules that take a Logger. */
export const silentLogger: Logger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  component: () => silentLogger,
};
