/**
 * What `agent import` shows and returns, and the messages between the CLI and the import process
 * (daemon/backup/import-main.ts, which the CLI runs by its path: the CLI holds no daemon code).
 */
/** What a daemon started on the restored home would run or expose. */
export interface ImportPreview {
  /** User actor modules (`actors/…`): loaded and run at start. */
  actors: string[];
  /** Cron jobs that are enabled in the archive. */
  cron: { profile: string; id: string; name: string; schedule: string; runs: string }[];
  /** Other commands the daemon runs: language servers in `lsp/`, `lsp.servers.*.command` in a config. */
  commands: string[];
  /** A gateway bind that is not loopback. */
  network: { file: string; key: string; value: string }[];
  /** Token and key names (never values) in `.env` files and configs. */
  tokens: { file: string; name: string }[];
}

export interface ImportResult {
  home: string;
  archive: string;
  files: number;
  preview: ImportPreview;
  /** Jobs restored paused (empty with keepCron). */
  cronPaused: { profile: string; id: string; name: string }[];
  /** Binds reset to 127.0.0.1 (empty with keepNetwork). */
  networkReset: { file: string; key: string; value: string }[];
  /** With --force: symbolic links of the home the archive's folders replaced (`path -> target`). */
  replacedLinks: string[];
}

/** The options the CLI passes to the import process (as JSON, its one argument). */
export interface ImportRequest {
  archive: string;
  home: string;
  force: boolean;
  keepCron: boolean;
  keepNetwork: boolean;
  /** Raw flag values (`20G`), parsed by the import process; absent: the env or default caps. */
  maxBytes?: string;
  maxFiles?: string;
  maxFileBytes?: string;
}

/** Import process → CLI. */
export type ImportReport =
  | { type: "staged"; archive: string; needsConsent: boolean; preview: ImportPreview }
  | { type: "done"; result: ImportResult }
  | { type: "error"; error: { code: string; message: string; metadata?: Record<string, unknown>; stack?: string } };

/** CLI → import process, after "staged": go on, or drop the staging folder. */
export type ImportAnswer = { type: "apply" } | { type: "cancel" };
