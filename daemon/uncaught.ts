/**
 * What the daemon does with an error nothing caught (`uncaughtException`, `unhandledRejection`).
 * A feature that hosts foreign code claims the errors of that code and contains them (the actors
 * feature fails the user actor under its crash policy). Any other such error is the daemon's
 * own: it is logged with its stack and the daemon exits with EXIT_DAEMON_FAULT, so systemd (or
 * the next client, which starts a daemon on demand) restarts it instead of it running on
 * half-dead. Acknowledged writes are on disk already, so exiting loses nothing acknowledged.
 */
import type { Logger } from "./log/logger.js";

export type UncaughtKind = "exception" | "rejection";
/** Returns true when the error was the claimer's to handle (and it handled it). */
export type UncaughtClaim = (error: unknown, kind: UncaughtKind) => boolean;

/** EX_SOFTWARE (sysexits.h): an internal software error. */
export const EXIT_DAEMON_FAULT = 70;

export class UncaughtErrors {
  private readonly claims: UncaughtClaim[] = [];

  /** Register a claim; returns its removal. */
  claim(claim: UncaughtClaim): () => void {
    this.claims.push(claim);
    return () => {
      const i = this.claims.indexOf(claim);
      if (i >= 0) this.claims.splice(i, 1);
    };
  }

  /** Install the process handlers. `fatal` ends the process (after logging). */
  install(log: Logger, fatal: (code: number) => void): void {
    const handle = (error: unknown, kind: UncaughtKind) => {
      if (this.claimed(error, kind, log)) return;
      const e = error instanceof Error ? error : new Error(`non-error value thrown: ${describe(error)}`);
      log.error(`unexpected daemon error (${kind === "exception" ? "uncaught exception" : "unhandled rejection"}); exiting`, {
        error: e,
        exitCode: EXIT_DAEMON_FAULT,
      });
      process.stderr.write(`agentd: unexpected error, exiting: ${e.stack ?? e.message}\n`);
      fatal(EXIT_DAEMON_FAULT);
    };
    process.on("uncaughtException", (error) => handle(error, "exception"));
    process.on("unhandledRejection", (reason) => handle(reason, "rejection"));
  }

  private claimed(error: unknown, kind: UncaughtKind, log: Logger): boolean {
    for (const claim of this.claims) {
      try {
        if (claim(error, kind)) return true;
      } catch (claimError) {
        // A claim that fails cannot decide: the error stays unclaimed.
        log.error("an uncaught-error claim threw", { error: claimError });
      }
    }
    return false;
  }
}

function describe(value: unknown): string {
  try {
    return String(value).slice(0, 200);
  } catch {
    return typeof value;
  }
}
