/**
 * Inspector authentication: the token comes from AGENT_INSPECTOR_TOKEN or gateway.inspector_token;
 * AGENT_ENV=production refuses every inspector request until one is configured; the comparison
 * takes constant time.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import { AgentError } from "../../shared/errors.js";

export interface InspectorAuthSettings {
  token: string;
  production: boolean;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}

/** Constant-time: both sides are hashed to equal-length digests before comparing. */
export function tokensEqual(given: string, expected: string): boolean {
  return timingSafeEqual(digest(given), digest(expected));
}

/**
 * Production: no token configured refuses everything; otherwise `Authorization: Bearer <token>`
 * is required. Development: a configured token is enforced; none configured = open.
 */
export function checkInspectorAuth(settings: InspectorAuthSettings, authorization: string | undefined): void {
  const expected = settings.token;
  if (!expected) {
    if (settings.production) {
      throw new AgentError("auth.unauthorized", "the inspector is disabled in production until an inspector token is configured (AGENT_INSPECTOR_TOKEN)");
    }
    return;
  }
  const match = /^Bearer\s+(.+)$/i.exec(authorization?.trim() ?? "");
  if (!match || !tokensEqual(match[1].trim(), expected)) {
    throw new AgentError("auth.unauthorized", "missing or wrong inspector token (Authorization: Bearer <token>)");
  }
}
