/**
 * The dashboard's sign-in: one-time codes (`agent dashboard` mints one; it works once, within
 * five minutes of the daemon's clock) and the browser sessions a code opens (an HttpOnly,
 * SameSite=Strict cookie). Only SHA-256 digests of codes and session tokens are kept, in memory
 * for codes and in `data/dashboard/sessions.json` (0600) for sessions, so a signed-in browser
 * stays signed in across a daemon restart and nothing on disk can be replayed as a cookie.
 */
import { createHash, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import type { IncomingMessage } from "node:http";
import { type Clock, systemClock } from "../../shared/clock.js";
import { SESSION_COOKIE_PREFIX } from "../http/plugins.js";
import { writeFileAtomic } from "../store/atomic-file.js";

/** A code is good for one use or this long. */
export const CODE_TTL_MS = 5 * 60_000;
/** A signed-in browser stays signed in this long after signing in. */
export const SESSION_TTL_MS = 7 * 24 * 60 * 60_000;
/** Codes minted and not used: the oldest go first beyond this many. */
const MAX_CODES = 64;
const MAX_SESSIONS = 256;

function digest(value: string): string {
  return createHash("sha256").update(value, "utf8").digest("hex");
}

export class DashboardSignIn {
  private readonly codes = new Map<string, number>();
  private sessions = new Map<string, number>();
  private saving: Promise<void> = Promise.resolve();

  constructor(
    /** Where the session digests are kept; null keeps them in memory only. */
    private readonly file: string | null,
    private readonly clock: Pick<Clock, "now"> = systemClock,
  ) {
    if (file) this.load(file);
  }

  /** A fresh one-time code and when it expires. */
  mintCode(): { code: string; expiresAt: number } {
    const code = randomBytes(24).toString("base64url");
    const expiresAt = this.clock.now() + CODE_TTL_MS;
    this.codes.set(digest(code), expiresAt);
    while (this.codes.size > MAX_CODES) this.codes.delete(this.codes.keys().next().value as string);
    return { code, expiresAt };
  }

  /** Spend a code: a new session token, or null (unknown, used or expired). A code never works twice. */
  redeem(code: string): string | null {
    const key = digest(code);
    const expires = this.codes.get(key);
    this.codes.delete(key);
    if (expires === undefined || expires <= this.clock.now()) return null;
    const token = randomBytes(32).toString("base64url");
    this.sessions.set(digest(token), this.clock.now() + SESSION_TTL_MS);
    this.prune();
    this.save();
    return token;
  }

  /** True when `token` is a live session (looked up by its digest: timing says nothing about the token). */
  valid(token: string | undefined): boolean {
    if (!token || token.length > 200) return false;
    const key = digest(token);
    const expires = this.sessions.get(key);
    if (expires === undefined) return false;
    if (expires <= this.clock.now()) {
      this.sessions.delete(key);
      this.save();
      return false;
    }
    return true;
  }

  /** End one session (sign out). */
  revoke(token: string | undefined): void {
    if (token && this.sessions.delete(digest(token))) this.save();
  }

  /** Resolves once the sessions file holds the latest state. */
  flushed(): Promise<void> {
    return this.saving;
  }

  private prune(): void {
    const now = this.clock.now();
    for (const [k, exp] of this.sessions) if (exp <= now) this.sessions.delete(k);
    while (this.sessions.size > MAX_SESSIONS) this.sessions.delete(this.sessions.keys().next().value as string);
  }

  private load(file: string): void {
    try {
      const data = JSON.parse(readFileSync(file, "utf8")) as { sessions?: Array<[string, number]> };
      for (const [k, exp] of data.sessions ?? []) if (typeof k === "string" && /^[0-9a-f]{64}$/.test(k) && typeof exp === "number") this.sessions.set(k, exp);
      this.prune();
    } catch {
      // No file yet, or an unreadable one: nobody is signed in.
    }
  }

  private save(): void {
    const file = this.file;
    if (!file) return;
    const text = JSON.stringify({ sessions: [...this.sessions] });
    this.saving = this.saving.then(async () => {
      mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
      await writeFileAtomic(file, text, { mode: 0o600 });
    });
    this.saving.catch(() => undefined);
  }
}

/** The cookie's name: per port, so two daemons on one machine (both 127.0.0.1) keep their own. */
export function cookieName(req: IncomingMessage): string {
  return `${SESSION_COOKIE_PREFIX}${req.socket.localPort ?? 0}`;
}

/** The session token the request's cookie carries, if any. */
export function sessionCookie(req: IncomingMessage): string | undefined {
  const header = req.headers.cookie;
  if (!header) return undefined;
  const name = cookieName(req);
  for (const part of header.split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0 && part.slice(0, eq).trim() === name) return part.slice(eq + 1).trim();
  }
  return undefined;
}

/** `Set-Cookie` for a new session (or, with null, one that clears it). */
export function setCookieHeader(req: IncomingMessage, token: string | null): string {
  const base = `${cookieName(req)}=${token ?? ""}; Path=/; HttpOnly; SameSite=Strict`;
  return token === null ? `${base}; Max-Age=0` : `${base}; Max-Age=${Math.floor(SESSION_TTL_MS / 1000)}`;
}
