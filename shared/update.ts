/**
 * What `agent update` reports, and the messages between the CLI and the update process
 * (daemon/update/update-main.ts, which the CLI runs by its path: updating must work while no
 * daemon runs, and the CLI holds no logic of its own). docs/debug-and-update.md.
 */

/** The options the CLI passes to the update process (as JSON, its one argument). */
export interface UpdateRequest {
  home: string;
  /** Only report what an update would do; change nothing. */
  check: boolean;
}

export interface UpdateHookOutcome {
  name: string;
  ran: boolean;
  detail: string;
}

export interface UpdateResult {
  /** git: the app's folder is a git work tree (tracks main); package: an npm install (tracks tagged releases). */
  kind: "git" | "package";
  app_dir: string;
  check: boolean;
  /** The installed commit (git) or version (package). */
  current: string;
  /** The newest commit of origin/main, or the newest tagged version. */
  available: string;
  up_to_date: boolean;
  /** True when this run changed the install. */
  updated: boolean;
  /** git: the commits between current and available (at most 20 listed, oldest last). */
  commits: { count: number; log: string[] } | null;
  /** The home's daemon after the update: restarted on the new code, or not running (it starts on next use). */
  daemon: { restarted: boolean; pid: number | null; version: string | null; commit: string | null; note: string | null } | null;
  /** Post-update hooks (the desktop-control driver's refresh). */
  hooks: UpdateHookOutcome[];
}

/** Update process → CLI. */
export type UpdateReport =
  | { type: "step"; step: string; detail: string }
  | { type: "step_done"; step: string; ms: number }
  | { type: "done"; result: UpdateResult }
  | { type: "error"; error: { code: string; message: string; metadata?: Record<string, unknown>; stack?: string } };
