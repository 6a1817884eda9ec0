/** Checking a request path and decoding its segments and actor ids (path.split("/") routing). */
import { actorNotFound, invalidRequest } from "./request-errors.js";

/** What an actor id may look like; anything else cannot exist, so it is "not found". */
export const ACTOR_ID_PATTERN = /^[A-Za-z0-9._~-]{1,128}$/;

export function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw invalidRequest("malformed percent-encoding in the path");
  }
}

/** Rejects dot segments (raw or percent-encoded, also inside an encoded segment) and NUL bytes. */
export function checkPath(path: string): void {
  if (path.length === 0 || path[0] !== "/") throw invalidRequest("the path must start with /");
  if (path.length > 8192) throw invalidRequest("path too long");
  if (path.includes("%") || path.includes(".") || path.includes("\\")) {
    for (const raw of path.split("/")) {
      const seg = decodeSegment(raw);
      if (seg.includes("\0")) throw invalidRequest("NUL bytes are not allowed in the path");
      for (const part of seg.split(/[\\/]/)) {
        if (part === "." || part === "..") throw invalidRequest("path traversal segments are not allowed");
      }
    }
  }
}

/** `{id}` or `{id}@{token}` as it appears in `/gateway/{id}/...`. */
export function parseActorIdSegment(raw: string): { actorId: string; token?: string } {
  const at = raw.indexOf("@");
  const idPart = at < 0 ? raw : raw.slice(0, at);
  const actorId = decodeSegment(idPart);
  if (!ACTOR_ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
  return at < 0 ? { actorId } : { actorId, token: decodeSegment(raw.slice(at + 1)) };
}
