// Wire formats of the gateway against the unmodified RivetKit 2.2.1 client, in-process with an
// in-memory runtime (fast; the daemon-level tests cover the real runtime).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { GatewayServer } from "../../daemon/gateway/server.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { fakeRuntime } from "./fake-runtime.js";
import { assertActionErrorsReachClient } from "./client-errors.js";
import * as ours from "../../daemon/gateway/bare.js";
// RivetKit's generated BARE schema (client protocol v3), read from its package for a
// byte-for-byte comparison.
import * as v3 from "../../node_modules/rivetkit/dist/schemas/client-protocol/v3.js";

const runtime = fakeRuntime();
const server = new GatewayServer({
  settings: { host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, inspector: { token: "", production: false } },
  runtime: () => runtime,
  log: silentLogger,
});
let url = "";

test.before(async () => {
  url = await server.start();
});
test.after(async () => {
  await server.stop();
});

for (const encoding of ["json", "cbor", "bare"] as const) {
  test(`rivetkit client (${encoding}): getOrCreate, get, getForId, create, actions, errors, fetch, queue`, async () => {
    const client = createClient<any>({ endpoint: url, encoding, disableMetadataLookup: false } as any) as any;
    const key = [`k-${encoding}`, "a/b", ""];
    const h = client.counter.getOrCreate(key, { createWithInput: { start: 10, bytes: new Uint8Array([1, 2, 3]) } });
    assert.is(await h.increment(5), 15);
    assert.is(await h.get(), 15);
    const input = await h.input();
    assert.is(input.start, 10);
    assert.equal([...input.bytes], [1, 2, 3]);
    assert.equal(await h.echo(1n, new Uint8Array([9]), ["$x", 1], { a: null }), [1n, new Uint8Array([9]), ["$x", 1], { a: null }]);
    const id = await h.resolve();
    assert.is(await client.counter.get(key).get(), 15);
    assert.is(await client.counter.getForId(id).get(), 15);
    const created = await client.counter.create([`c-${encoding}`], { input: { start: 100 } });
    assert.is(await created.get(), 100);
    await assertActionErrorsReachClient(h);
    const response = await h.fetch("/some/path?x=1", { method: "POST", body: "hello", headers: { "x-test": "t" } });
    assert.is(response.status, 201);
    assert.is(response.headers.get("x-from-actor"), "yes");
    assert.equal(await response.json(), { url: "http://actor/some/path?x=1", method: "POST", body: "hello", header: "t" });
    await h.send("jobs", { n: 1 });
    const reply = await h.send("jobs", { n: 2 }, { wait: true, timeout: 1000 });
    assert.equal(reply, { status: "completed", response: { got: { n: 2 } } });
    await client.dispose?.();
  });
}

const withVersion = (bytes: Uint8Array) => Buffer.concat([Buffer.from([3, 0]), Buffer.from(bytes)]);
const ab = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

test("BARE codec matches RivetKit's generated v3 schema byte for byte", () => {
  const big = new Uint8Array(300).map((_, i) => i & 0xff);
  for (const data of [new Uint8Array([]), new Uint8Array([1, 2, 3]), big]) {
    assert.equal(Buffer.from(ours.encodeActionResponse(data)), withVersion(v3.encodeHttpActionResponse({ output: ab(data) })));
    assert.equal(Buffer.from(ours.decodeActionRequest(withVersion(v3.encodeHttpActionRequest({ args: ab(data) })))), Buffer.from(data));
    for (const meta of [null, data]) {
      assert.equal(
        Buffer.from(ours.encodeResponseError("user", "bad_thing", "it failed ✓", meta)),
        withVersion(v3.encodeHttpResponseError({ group: "user", code: "bad_thing", message: "it failed ✓", metadata: meta ? ab(meta) : null })),
      );
    }
    for (const response of [null, data]) {
      assert.equal(Buffer.from(ours.encodeQueueSendResponse("completed", response)), withVersion(v3.encodeHttpQueueSendResponse({ status: "completed", response: response ? ab(response) : null })));
    }
    for (const [name, wait, timeout] of [[null, null, null], ["jobs", true, 5000n], ["j", false, 2n ** 40n]] as const) {
      const decoded = ours.decodeQueueSendRequest(withVersion(v3.encodeHttpQueueSendRequest({ body: ab(data), name, wait, timeout })));
      assert.equal(Buffer.from(decoded.body), Buffer.from(data));
      assert.equal([decoded.name, decoded.wait, decoded.timeout], [name, wait, timeout]);
    }
  }
  assert.throws(() => ours.decodeQueueSendRequest(Buffer.from([2, 0, 0, 0, 0, 0])));
  assert.throws(() => ours.decodeActionRequest(Buffer.from([3, 0, 5, 1])));
  assert.throws(() => ours.decodeActionRequest(Buffer.from([3, 0, 1, 1, 9])));
});

test("unknown encoding is 400 encoding.invalid", async () => {
  const r = await fetch(`${url}/metadata`, { headers: { "x-rivet-encoding": "xml" } });
  assert.is(r.status, 400);
  assert.is(((await r.json()) as any).code, "invalid");
});

test.run();
