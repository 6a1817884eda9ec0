/**
 * Values an actor keeps (state, queue bodies, step results, scheduled args) are stored as JSON
 * text with two tags so CBOR-only values survive a round trip: `{"$u8": base64}` for a
 * Uint8Array and `{"$bigint": "123"}` for a BigInt. `undefined` becomes `null` at the top level.
 */

function replacer(this: unknown, _key: string, value: unknown): unknown {
  if (typeof value === "bigint") return { $bigint: value.toString() };
  if (value instanceof Uint8Array) return { $u8: Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") };
  return value;
}

function reviver(_key: string, value: unknown): unknown {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const v = value as Record<string, unknown>;
    if (typeof v.$u8 === "string" && Object.keys(v).length === 1) return new Uint8Array(Buffer.from(v.$u8, "base64"));
    if (typeof v.$bigint === "string" && Object.keys(v).length === 1) return BigInt(v.$bigint);
  }
  return value;
}

export function encodeValue(value: unknown): string {
  if (value === undefined) return "null";
  return JSON.stringify(value, replacer) ?? "null";
}

export function decodeValue(text: string | null | undefined): unknown {
  if (text === null || text === undefined) return undefined;
  return JSON.parse(text, reviver);
}
