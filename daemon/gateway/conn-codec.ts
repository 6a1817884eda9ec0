/**
 * The messages of a RivetKit connection (`handle.connect()`, client protocol v3) in the three
 * encodings the client speaks, chosen by its `rivet_encoding.<e>` WebSocket protocol:
 *
 *   to the client  Init { actorId, connectionId } · Error { group, code, message, metadata?,
 *                  actionId? } · ActionResponse { id, output } · Event { name, args }
 *   to the server  ActionRequest { id, name, args } · SubscriptionRequest { eventName, subscribe }
 *
 * `json` is `{ body: { tag, val } }` with RivetKit's compat tags (ids are BigInts, written
 * `["$BigInt", "1"]`), sent as text; `cbor` is the same object in CBOR (ids as CBOR uint64);
 * `bare` is the 2-byte little-endian version, the union tag, then the fields, with `output`,
 * `args` and `metadata` as CBOR bytes.
 */
import { AgentError } from "../../shared/errors.js";
import { BARE_CURRENT_VERSION, BareWriter, bareVersion } from "./bare.js";
import { cborDecodeStrict, cborEncodeValue, type Encoding, jsonParse, jsonStringifyCompat } from "../http/encoding.js";

export type ToServer =
  | { tag: "ActionRequest"; id: bigint; name: string; args: unknown[] }
  | { tag: "SubscriptionRequest"; eventName: string; subscribe: boolean };

export type ToClient =
  | { tag: "Init"; actorId: string; connectionId: string }
  | { tag: "Error"; group: string; code: string; message: string; metadata?: unknown; actionId: bigint | null }
  | { tag: "ActionResponse"; id: bigint; output: unknown }
  | { tag: "Event"; name: string; args: unknown[] };

const TAGS = { Init: 0, Error: 1, ActionResponse: 2, Event: 3 } as const;

function invalid(detail: string): AgentError {
  return new AgentError("request.invalid", `invalid connection message: ${detail}`);
}

function toBigInt(v: unknown): bigint {
  if (typeof v === "bigint") return v;
  if (typeof v === "number" && Number.isSafeInteger(v) && v >= 0) return BigInt(v);
  throw invalid("an action id must be an unsigned integer");
}

export function encodeToClient(m: ToClient, encoding: Encoding): string | Uint8Array {
  if (encoding === "bare") {
    const w = new BareWriter(BARE_CURRENT_VERSION);
    w.uint(TAGS[m.tag]);
    switch (m.tag) {
      case "Init":
        w.string(m.actorId).string(m.connectionId);
        break;
      case "Error":
        w.string(m.group).string(m.code).string(m.message);
        w.bool(m.metadata !== undefined);
        if (m.metadata !== undefined) w.data(cborEncodeValue(m.metadata));
        w.bool(m.actionId !== null);
        if (m.actionId !== null) w.uint(Number(m.actionId));
        break;
      case "ActionResponse":
        w.uint(Number(m.id)).data(cborEncodeValue(m.output));
        break;
      case "Event":
        w.string(m.name).data(cborEncodeValue(m.args));
        break;
    }
    return w.finish();
  }
  const { tag, ...val } = m;
  const body = { body: { tag, val } };
  return encoding === "cbor" ? cborEncodeValue(body) : jsonStringifyCompat(body);
}

export function decodeToServer(data: Buffer, isBinary: boolean, encoding: Encoding): ToServer {
  if (encoding === "bare") {
    if (!isBinary) throw invalid("bare messages are binary");
    const { reader } = bareVersion(data);
    const tag = reader.uint();
    if (tag === 0) {
      const id = BigInt(reader.uint());
      const name = reader.string();
      const args = cborDecodeStrict(reader.data());
      reader.end();
      if (!Array.isArray(args)) throw invalid("args must be an array");
      return { tag: "ActionRequest", id, name, args };
    }
    if (tag === 1) {
      const eventName = reader.string();
      const subscribe = reader.bool();
      reader.end();
      return { tag: "SubscriptionRequest", eventName, subscribe };
    }
    throw invalid(`unknown message tag ${tag}`);
  }
  const parsed = (encoding === "cbor" ? cborDecodeStrict(data) : jsonParse(data.toString("utf8"))) as { body?: { tag?: unknown; val?: any } } | null;
  const body = parsed?.body;
  const val = body?.val;
  if (!body || typeof val !== "object" || val === null) throw invalid("expected { body: { tag, val } }");
  if (body.tag === "ActionRequest") {
    if (typeof val.name !== "string") throw invalid("an action request needs a name");
    if (!Array.isArray(val.args)) throw invalid("args must be an array");
    return { tag: "ActionRequest", id: toBigInt(val.id), name: val.name, args: val.args };
  }
  if (body.tag === "SubscriptionRequest") {
    if (typeof val.eventName !== "string" || typeof val.subscribe !== "boolean") throw invalid("a subscription needs eventName and subscribe");
    return { tag: "SubscriptionRequest", eventName: val.eventName, subscribe: val.subscribe };
  }
  throw invalid(`unknown message tag ${String(body.tag).slice(0, 40)}`);
}
