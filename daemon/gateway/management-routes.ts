/**
 * The management API, as RivetKit's clients call it: `/actors` (list, get-or-create, create,
 * destroy), `/actors/names`, an actor's KV keys, plus the service's `/metadata` and `/health`.
 */
import type { ServerResponse } from "node:http";
import { AgentError } from "../../shared/errors.js";
import { APP_VERSION } from "../../shared/version.js";
import { builtinRefused } from "../actors/api.js";
import type { ActorRuntime, CrashPolicy } from "../actors/api.js";
import { isInternalActor, requireActor, type GatewayContext, type GatewayRequest } from "./gateway-request.js";
import { cborDecodeStrict, decodeGenericBody, type Encoding } from "../http/encoding.js";
import { ACTOR_ID_PATTERN } from "../http/path.js";
import { actorNotFound, badRequest, nameNotFound } from "../http/request-errors.js";
import { isPlainObject, strictBase64Decode } from "./request-values.js";
import { sendValue, type HeaderMap } from "../http/response.js";

const CRASH_POLICIES = new Set<string>(["restart", "sleep", "destroy"]);
const MAX_KEY_BYTES = 128;
const MAX_INPUT_BYTES = 4 * 1024 * 1024;
const MAX_ACTOR_IDS = 32;

function namespaceParam(params: URLSearchParams): string {
  const ns = params.get("namespace");
  if (ns === null || ns === "") return "default";
  if (ns.length > 128) throw badRequest("namespace is too long (at most 128 characters)");
  return ns;
}

/** Definition names a caller may see: internal ones only with the token. */
function visibleNames(runtime: ActorRuntime, trusted: boolean): string[] {
  const names = runtime.definitionNames();
  return trusted ? names : names.filter((n) => !isInternalActor(runtime, n));
}

/** `GET /metadata`: answers even while the actor runtime is not running. */
export function sendMetadata(ctx: GatewayContext, res: ServerResponse, encoding: Encoding, cors: HeaderMap | null, trusted: boolean): void {
  const runtime = ctx.runtimeIfRunning();
  const names = runtime ? visibleNames(runtime, trusted) : [];
  const metadata = {
    runtime: "agent",
    version: APP_VERSION,
    runner: { kind: { normal: {} } },
    actorNames: Object.fromEntries(names.map((n) => [n, { metadata: {} }])),
  };
  sendValue(res, 200, metadata, encoding, cors);
}

/** `GET /health` of the service (an actor's own is in actor-routes.ts). */
export function sendServiceHealth(res: ServerResponse, encoding: Encoding, cors: HeaderMap | null): void {
  sendValue(res, 200, { status: "ok", runtime: "agent", version: APP_VERSION }, encoding, cors);
}

/** Actors per page of `GET /actors?name=...&cursor=...` without a limit, and the largest limit. */
const DEFAULT_PAGE = 100;
const MAX_PAGE = 1000;

/** `GET /actors?actor_ids=...` or `GET /actors?name=...[&key=...][&limit=...&cursor=...]`. */
export function listActors(ctx: GatewayContext, res: ServerResponse, search: string, encoding: Encoding, cors: HeaderMap | null, trusted: boolean): void {
  const params = new URLSearchParams(search);
  const namespace = namespaceParam(params);
  const ids = params.get("actor_ids");
  const name = params.get("name");
  const key = params.get("key");
  if (ids !== null && name !== null) throw badRequest("give either actor_ids or name, not both");
  if (ids === null && name === null) throw badRequest(key !== null ? "key needs name" : "give actor_ids or name");
  if (ids !== null) {
    if (key !== null) throw badRequest("key needs name");
    const list = ids.split(",").filter((id) => id !== "");
    if (list.length === 0) throw badRequest("actor_ids is empty");
    if (list.length > MAX_ACTOR_IDS) throw badRequest(`at most ${MAX_ACTOR_IDS} actor_ids per call`);
    const valid = list.filter((id) => ACTOR_ID_PATTERN.test(id));
    const runtime = ctx.runtime();
    const actors = valid.length ? runtime.list({ namespace, actor_ids: valid }) : [];
    sendValue(res, 200, { actors: trusted ? actors : actors.filter((a) => !isInternalActor(runtime, a.name)) }, encoding, cors);
    return;
  }
  if (name === "") throw badRequest("name is empty");
  const runtime = ctx.runtime();
  const limitParam = params.get("limit");
  const cursor = params.get("cursor");
  const hidden = !trusted && isInternalActor(runtime, name!);
  if (limitParam === null && cursor === null) {
    // An internal name lists nothing for an untrusted caller, like a name nobody uses.
    const actors = hidden ? [] : runtime.list({ namespace, name: name!, ...(key !== null ? { key } : {}) });
    sendValue(res, 200, { actors }, encoding, cors);
    return;
  }
  // Paged (newest first): `pagination.cursor` is the next page's `cursor`, null on the last page.
  const limit = limitParam === null ? DEFAULT_PAGE : Number(limitParam);
  if (!/^[0-9]+$/.test(limitParam ?? "1") || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw badRequest(`limit must be an integer from 1 to ${MAX_PAGE}`);
  if (cursor !== null && !ACTOR_ID_PATTERN.test(cursor)) throw badRequest("cursor is not an actor id");
  const page = hidden
    ? { actors: [], cursor: null }
    : runtime.listPage({ namespace, name: name!, limit, ...(key !== null ? { key } : {}), ...(cursor !== null ? { cursor } : {}) });
  sendValue(res, 200, { actors: page.actors, pagination: { cursor: page.cursor } }, encoding, cors);
}

/** The body of `PUT /actors` (key required) and `POST /actors`. */
function parseCreateBody(body: Buffer, encoding: Encoding, keyRequired: boolean) {
  if (body.length === 0) throw badRequest("a JSON body is required");
  const data = decodeGenericBody(body, encoding);
  if (!isPlainObject(data)) throw badRequest("the body must be a JSON object");
  const { name, key, runner_name_selector, crash_policy, input, datacenter } = data;
  if (typeof name !== "string" || name === "") throw badRequest("name must be a non-empty string");
  if (name.length > 256) throw badRequest("name is too long");
  if (keyRequired ? typeof key !== "string" : key !== undefined && key !== null && typeof key !== "string") {
    throw badRequest(keyRequired ? "key must be a string" : "key must be a string or null");
  }
  if (typeof key === "string" && Buffer.byteLength(key) > MAX_KEY_BYTES) {
    throw new AgentError("actor.key_too_large", `key is longer than ${MAX_KEY_BYTES} bytes`, { max_bytes: MAX_KEY_BYTES });
  }
  // Required on PUT and POST alike, like crash_policy: a create names where it runs and what a crash does.
  if (typeof runner_name_selector !== "string" || runner_name_selector === "" || runner_name_selector.length > 256) {
    throw badRequest("runner_name_selector is required: a non-empty string");
  }
  if (typeof crash_policy !== "string" || !CRASH_POLICIES.has(crash_policy)) {
    throw badRequest(
      crash_policy === undefined ? "crash_policy is required (one of restart, sleep, destroy)" : "crash_policy must be one of restart, sleep, destroy",
    );
  }
  if (datacenter !== undefined && datacenter !== null && typeof datacenter !== "string") throw badRequest("datacenter must be a string or null");
  let decodedInput: unknown;
  if (input !== undefined && input !== null) {
    if (typeof input !== "string") throw badRequest("input must be a base64 string (CBOR) or null");
    if (input.length > Math.ceil((MAX_INPUT_BYTES * 4) / 3) + 4) {
      throw new AgentError("actor.input_too_large", `input is larger than ${MAX_INPUT_BYTES} bytes`, { max_bytes: MAX_INPUT_BYTES });
    }
    const bytes = strictBase64Decode(input, "input");
    if (bytes.length > MAX_INPUT_BYTES)
      throw new AgentError("actor.input_too_large", `input is larger than ${MAX_INPUT_BYTES} bytes`, { max_bytes: MAX_INPUT_BYTES });
    decodedInput = bytes.length === 0 ? undefined : cborDecodeStrict(bytes, "api.bad_request");
  }
  return {
    name,
    key: typeof key === "string" ? key : null,
    runner_name_selector,
    crash_policy: crash_policy as CrashPolicy,
    input: decodedInput,
    datacenter: (datacenter as string | null | undefined) ?? null,
  };
}

/** An internal name is "no such definition" for an untrusted caller. */
function requireDefinition(runtime: ActorRuntime, name: string, trusted: boolean): void {
  if (!runtime.hasDefinition(name) || (!trusted && isInternalActor(runtime, name))) throw nameNotFound(name);
}

/** `PUT /actors` (get or create by key) and `POST /actors` (create; a key is optional). */
export async function createActor(ctx: GatewayContext, call: GatewayRequest, body: Buffer): Promise<void> {
  const { res, search, encoding, cors, trusted } = call;
  const getOrCreate = call.method === "PUT";
  const namespace = namespaceParam(new URLSearchParams(search));
  const request = parseCreateBody(body, encoding, getOrCreate);
  const runtime = ctx.runtime();
  requireDefinition(runtime, request.name, trusted);
  if (getOrCreate) {
    const result = await runtime.getOrCreate({ ...request, namespace, key: request.key! });
    sendValue(res, 200, { actor: result.actor, created: result.created }, encoding, cors);
  } else sendValue(res, 200, { actor: await runtime.create({ ...request, namespace }) }, encoding, cors);
}

/** `DELETE /actors/{id}`. */
export async function destroyActor(
  ctx: GatewayContext,
  res: ServerResponse,
  actorId: string,
  encoding: Encoding,
  cors: HeaderMap | null,
  trusted: boolean,
): Promise<void> {
  if (!ACTOR_ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
  const runtime = ctx.runtime();
  const record = requireActor(runtime, actorId, trusted);
  // A trusted caller sees the product's own actors, but destroying one would wipe what its
  // feature manages (a board's tasks, a profile's cron jobs): refused as over RPC.
  if (isInternalActor(runtime, record.name)) throw builtinRefused(record);
  await runtime.destroy(actorId);
  sendValue(res, 200, {}, encoding, cors);
}

/** `GET /actors/names?namespace=...`. */
export function listActorNames(ctx: GatewayContext, res: ServerResponse, search: string, encoding: Encoding, cors: HeaderMap | null, trusted: boolean): void {
  const params = new URLSearchParams(search);
  const ns = params.get("namespace");
  if (ns === null || ns === "") throw badRequest("the namespace query parameter is required");
  const names = visibleNames(ctx.runtime(), trusted);
  sendValue(res, 200, { names: Object.fromEntries(names.map((n) => [n, { metadata: {} }])) }, encoding, cors);
}

/** `GET /actors/{id}/kv/keys/{base64 key}`. */
export async function getKvValue(
  ctx: GatewayContext,
  res: ServerResponse,
  actorId: string,
  keyText: string,
  encoding: Encoding,
  cors: HeaderMap | null,
  trusted: boolean,
): Promise<void> {
  if (!ACTOR_ID_PATTERN.test(actorId)) throw actorNotFound(actorId);
  if (keyText === "") throw badRequest("the KV key is empty");
  const key = strictBase64Decode(keyText, "the KV key");
  if (key.length === 0) throw badRequest("the KV key is empty");
  const runtime = ctx.runtime();
  requireActor(runtime, actorId, trusted);
  const value = await runtime.kvGet(actorId, new Uint8Array(key.buffer, key.byteOffset, key.byteLength));
  sendValue(res, 200, { value: value === null ? null : Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString("base64") }, encoding, cors);
}
