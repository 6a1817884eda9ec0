import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { LogFile } from "./log-file.js";
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
 * One JSON-lines file per component under `$AGENT_HOME/logs/`, each written by the one log
 * writer (log-file.ts: synchronous appends, rotation by size).
 */
export class FileLogSink {
  private readonly files = new Map<string, LogFile>();
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
    for (const file of this.files.values()) file.configure({ maxBytes: settings.max_bytes, keep: settings.keep });
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
    // Redacted once here (the mirror gets the same text), so the file writes it as it is.
    const line = this.redactor.text(JSON.stringify(record)) + "\n";
    try {
      this.file(component).append(line);
    } catch {
      // Logging must never take the daemon down (full disk, removed folder).
    }
    this.options.mirror?.(line.trimEnd(), level);
  }

  private file(component: string): LogFile {
    let file = this.files.get(component);
    if (!file) {
      const { maxBytes, keep } = this.options;
      file = new LogFile(join(this.options.dir, `${component}.log`), { maxBytes, keep, redactor: null });
      this.files.set(component, file);
    }
    return file;
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
