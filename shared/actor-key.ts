/**
 * The wire form of an actor key, as RivetKit's clients send it: the parts of a `string[]` joined by
 * `/`, with `\` written `\\`, `/` written `\/`, an empty part written `\0`, and the empty array
 * written `/`. Matching is exact on the serialized string.
 */

/** Keys longer than this many bytes (UTF-8, serialized) are refused with `actor.key_too_large`. */
export const MAX_ACTOR_KEY_BYTES = 128;

export function serializeActorKey(parts: readonly string[]): string {
  if (parts.length === 0) return "/";
  let out = "";
  for (let i = 0; i < parts.length; i++) {
    if (i > 0) out += "/";
    const part = parts[i]!;
    if (part === "") out += "\\0";
    else out += part.replace(/\\/g, "\\\\").replace(/\//g, "\\/");
  }
  return out;
}

/** The inverse of serializeActorKey. A lone trailing `\` is kept literally (lenient). */
export function parseActorKey(serialized: string): string[] {
  if (serialized === "/") return [];
  const parts: string[] = [];
  let current = "";
  let emptyMarker = false;
  for (let i = 0; i < serialized.length; i++) {
    const ch = serialized[i]!;
    if (ch === "\\") {
      const next = serialized[i + 1];
      if (next === "\\" || next === "/") {
        current += next;
        i++;
      } else if (next === "0") {
        emptyMarker = true;
        i++;
      } else {
        current += ch;
      }
    } else if (ch === "/") {
      parts.push(emptyMarker && current === "" ? "" : current);
      current = "";
      emptyMarker = false;
    } else {
      current += ch;
    }
  }
  parts.push(current);
  return parts;
}

export function actorKeyBytes(serialized: string): number {
  return Buffer.byteLength(serialized, "utf8");
}
