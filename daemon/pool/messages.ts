/**
 * The protocol between the tool pool (daemon side) and its threads, in one place: every task the
 * thread accepts and what it answers. Messages cross a thread boundary (structured clone), so
 * they hold plain data only: no class instances, functions or Errors.
 */

/** Result of the syntax-only check that follows every write and patch. */
export interface LintResult {
  status: "ok" | "error" | "skipped";
  /** Empty when ok; the parser's messages when error; the reason when skipped. */
  output: string;
}

export type PoolTask =
  | { kind: "read_file"; path: string; offset: number; limit: number }
  | { kind: "write_file"; path: string; content: string }
  | { kind: "patch"; path: string; search: string; replace: string }
  | { kind: "list_files"; path: string; depth: number; maxEntries: number }
  | { kind: "search_files"; path: string; pattern: string; glob?: string; maxResults: number }
  | { kind: "lint"; path: string; content: string }
  | { kind: "format_output"; head: Uint8Array; tail: Uint8Array; omittedBytes: number };

export type TaskKind = PoolTask["kind"];
export type TaskOf<K extends TaskKind> = Extract<PoolTask, { kind: K }>;

export type ReadFileValue =
  | {
      type: "text";
      path: string;
      /** The requested lines, each prefixed with its 1-based number and a tab. */
      content: string;
      start_line: number;
      end_line: number;
      total_lines: number;
      truncated: boolean;
      /** Where to continue when the output was cut short. */
      next_offset?: number;
    }
  | { type: "image"; path: string; mime: string; base64: string; bytes: number };

export interface WriteValue {
  path: string;
  bytes_written: number;
  lint: LintResult;
}

export interface ListFilesValue {
  path: string;
  /** Relative to `path`; directories end with `/`. */
  entries: string[];
  truncated: boolean;
}

export interface SearchMatch {
  /** Relative to the searched path. */
  path: string;
  line: number;
  text: string;
}

export interface SearchFilesValue {
  path: string;
  matches: SearchMatch[];
  files_searched: number;
  truncated: boolean;
}

export interface FormatOutputValue {
  output: string;
}

export interface TaskValues {
  read_file: ReadFileValue;
  write_file: WriteValue;
  patch: WriteValue;
  list_files: ListFilesValue;
  search_files: SearchFilesValue;
  lint: LintResult;
  format_output: FormatOutputValue;
}

/** An expected failure (missing file, ambiguous patch, bad regex): the model reads `message`. */
export interface TaskFailure {
  code: string;
  message: string;
}

/** What the thread answers. Expected failures are values; only bugs make the thread throw. */
export type TaskOutcome<K extends TaskKind> = { ok: true; value: TaskValues[K] } | { ok: false; error: TaskFailure };
