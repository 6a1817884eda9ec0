/**
 * Media the agent sends to LINE: LINE fetches an image from a public https URL, so a file is
 * registered here and served at `/line/media/<token>/<filename>` until its token expires.
 *
 * - A token is 192 random bits (unguessable) and expires (default 1 hour).
 * - Only files under the allowed roots are served: the system temp directory and the home. The
 *   check runs on the path after resolving symlinks, at registration and again when served (a
 *   symlink swapped in later points nowhere it may not).
 * - The filename in the URL must be the registered one; anything else (`..`, another name) is 404.
 * - `LINE_PUBLIC_URL` overrides the base the URL is built on (the reverse proxy's address).
 */
import { randomBytes } from "node:crypto";
import { createReadStream } from "node:fs";
import { realpath, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { tmpdir } from "node:os";
import { basename, extname, sep } from "node:path";
import type { Clock } from "../../../shared/clock.js";
import { AgentError } from "../../../shared/errors.js";

export const MEDIA_PREFIX = "/line/media/";
export const DEFAULT_MEDIA_TTL_MS = 3600_000;
const MAX_ENTRIES = 1000;

const TYPES: Record<string, string> = {
  ".png": "image/png",
  ".jpg": "image/jpeg",
  ".jpeg": "image/jpeg",
  ".gif": "image/gif",
  ".webp": "image/webp",
  ".mp4": "video/mp4",
  ".m4a": "audio/mp4",
  ".mp3": "audio/mpeg",
};

interface MediaEntry {
  file: string;
  filename: string;
  expiresAt: number;
}

function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

export class LineMedia {
  private readonly entries = new Map<string, MediaEntry>();
  private rootsResolved: Promise<string[]> | null = null;

  /** `roots`: the allowed roots (default: the temp directory; the adapter adds the home). */
  constructor(private readonly options: { roots: string[]; clock: Clock; ttlMs?: number }) {}

  private roots(): Promise<string[]> {
    this.rootsResolved ??= Promise.all([tmpdir(), ...this.options.roots].map((r) => realpath(r).catch(() => null))).then((list) =>
      list.filter((r): r is string => r !== null),
    );
    return this.rootsResolved;
  }

  /** The file's real path when it is a regular file under an allowed root; throws `line.media_refused` otherwise. */
  private async allowed(file: string): Promise<string> {
    let real: string;
    try {
      real = await realpath(file);
    } catch {
      throw new AgentError("line.media_refused", `media file ${basename(file)} does not exist`);
    }
    const roots = await this.roots();
    if (!roots.some((root) => within(real, root))) {
      throw new AgentError("line.media_refused", `media file ${basename(file)} is outside the allowed roots (temp directories and the home)`);
    }
    const info = await stat(real);
    if (!info.isFile()) throw new AgentError("line.media_refused", `media ${basename(file)} is not a regular file`);
    return real;
  }

  /** Registers a file; returns the path part of its URL (`/line/media/<token>/<filename>`). */
  async register(file: string, ttlMs = this.options.ttlMs ?? DEFAULT_MEDIA_TTL_MS): Promise<string> {
    await this.allowed(file);
    this.prune();
    const token = randomBytes(24).toString("base64url");
    const filename = encodeURIComponent(basename(file));
    this.entries.set(token, { file, filename, expiresAt: this.options.clock.now() + ttlMs });
    return `${MEDIA_PREFIX}${token}/${filename}`;
  }

  /** The full URL LINE fetches: `publicBase` (LINE_PUBLIC_URL, or the listener's URL) + the path. */
  static url(publicBase: string, path: string): string {
    return `${publicBase.replace(/\/+$/, "")}${path}`;
  }

  private prune(): void {
    const now = this.options.clock.now();
    for (const [token, entry] of this.entries) if (entry.expiresAt <= now) this.entries.delete(token);
    while (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
  }

  /** Serves `GET|HEAD /line/media/<token>/<filename>`; 404 for anything not registered, expired or refused. */
  async serve(req: IncomingMessage, res: ServerResponse, path: string): Promise<void> {
    const notFound = () => {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("not found\n");
    };
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" });
      res.end("method not allowed\n");
      return;
    }
    const rest = path.slice(MEDIA_PREFIX.length);
    const slash = rest.indexOf("/");
    if (slash <= 0) return notFound();
    const token = rest.slice(0, slash);
    const filename = rest.slice(slash + 1);
    const entry = this.entries.get(token);
    if (!entry || entry.filename !== filename) return notFound();
    if (entry.expiresAt <= this.options.clock.now()) {
      this.entries.delete(token);
      return notFound();
    }
    let real: string;
    try {
      real = await this.allowed(entry.file);
    } catch {
      return notFound();
    }
    const info = await stat(real);
    res.writeHead(200, {
      "content-type": TYPES[extname(real).toLowerCase()] ?? "application/octet-stream",
      "content-length": info.size,
      "cache-control": "private, max-age=300",
      "x-content-type-options": "nosniff",
    });
    if (req.method === "HEAD") {
      res.end();
      return;
    }
    await new Promise<void>((resolve) => {
      const stream = createReadStream(real);
      stream.once("error", () => {
        res.destroy();
        resolve();
      });
      stream.once("end", resolve);
      stream.pipe(res);
    });
  }
}
