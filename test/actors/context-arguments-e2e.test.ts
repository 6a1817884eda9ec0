// The actor context `c` is made by one factory (daemon/actors/actor-context.ts) for both places an
// actor's code runs, so it checks its arguments the same way in both: a KV key or value that is
// neither a string nor bytes is refused with `actor.invalid_argument` and nothing is stored.
// (Before, the runner's copy turned a number key into that many zero bytes and stored it, and an
// undefined value into an empty one.)
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorContext } from "../../daemon/actors/types.js";
import { actorHome } from "./daemon-helpers.js";
import { req, tempRuntime } from "./helpers.js";

const ACTIONS = `{
  put: (c, key, value) => c.kv.put(key, value),
  putUndefined: (c, key) => c.kv.putJson(key, undefined),
  get: async (c, key) => { const v = await c.kv.get(key); return v === null || typeof v === "string" ? v : [...v]; },
  count: async (c) => (await c.kv.list()).length,
  listWith: async (c, prefix) => (await c.kv.list(prefix)).length,
}`;

// In a runner worker: a real daemon with a user module, called over the gateway as a client would.
let h!: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome({ "kvuser.mjs": `export const kvuser = { actions: ${ACTIONS} };` });
});
test.after(async () => {
  await h?.dispose();
});

async function call(id: string, action: string, args: unknown[]): Promise<{ status: number; json: any }> {
  const r = await fetch(`${h.url}/gateway/${id}/action/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ args }),
  });
  return { status: r.status, json: await r.json() };
}

function refused(r: { status: number; json: any }, argument: string) {
  assert.is(r.status, 400, JSON.stringify(r.json));
  assert.is(`${r.json.group}.${r.json.code}`, "actor.invalid_argument", JSON.stringify(r.json));
  assert.match(r.json.message, `c.${argument} must be a string or a Uint8Array`);
}

test("in a runner: a KV key or value that is not a string or bytes is refused and nothing is stored", async () => {
  const id = (await h.json(["actors", "create", "kvuser", "--key", "args"])).actor_id;
  refused(await call(id, "put", [5, "x"]), "kv key");
  refused(await call(id, "put", [{ a: 1 }, "x"]), "kv key");
  refused(await call(id, "put", ["k", 42]), "kv value");
  // JSON.stringify(undefined) is undefined: not an empty value.
  refused(await call(id, "putUndefined", ["k"]), "kv value");
  refused(await call(id, "listWith", [7]), "kv prefix");
  assert.equal((await call(id, "count", [])).json, { output: 0 });
  // The right kinds still work, and the actor is not harmed by the refusals.
  assert.is((await call(id, "put", ["k", "v"])).status, 200);
  // A user actor's c.kv is RivetKit's: text comes back as text.
  assert.equal((await call(id, "get", ["k"])).json, { output: "v" });
  assert.equal((await call(id, "count", [])).json, { output: 1 });
});

test("in the daemon's own thread: the same refusals, from the same context", async () => {
  const actions = new Function(`return ${ACTIONS}`)() as Record<string, (c: ActorContext, ...args: any[]) => unknown>;
  const rt = await tempRuntime({ kvuser: { actions } });
  try {
    const { actor } = await rt.rt.getOrCreate({ ...req("kvuser", "inline"), key: "inline" });
    for (const [action, args, argument] of [
      ["put", [5, "x"], "kv key"],
      ["put", ["k", 42], "kv value"],
      ["putUndefined", ["k"], "kv value"],
      ["listWith", [7], "kv prefix"],
    ] as const) {
      try {
        await rt.rt.action(actor.actor_id, action, [...args]);
        assert.unreachable(`${action} should be refused`);
      } catch (error: any) {
        assert.is(error.code, "actor.invalid_argument", String(error));
        assert.match(error.message, `c.${argument} must be a string or a Uint8Array`);
      }
    }
    assert.is(await rt.rt.action(actor.actor_id, "count", []), 0);
  } finally {
    await rt.dispose();
  }
});

test.run();
