// Wire formats of the gateway against the unmodified RivetKit 2.2.1 client, in-process over the
// real actor runtime on a temp data dir (no daemon, no runner thread: fast; the daemon-level tests
// cover user modules behind the runner boundary).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { GatewayServer } from "../../daemon/gateway/server.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { tempRuntime } from "../actors/helpers.js";
import { assertInternalErrorHidesDetail, assertUserErrorReachesClient } from "./client-errors.js";
import * as ours from "../../daemon/gateway/bare.js";
// RivetKit's generated BARE schema (client protocol v3), read from its package for a
// byte-for-byte comparison.
import * as v3 from "../../node_modules/rivetkit/dist/schemas/client-protocol/v3.js";

/** The test `counter` actor of the daemon-level tests (test/gateway/daemon.ts), written as a definition. */
const counter: ActorDefinition<{ count: number; input: unknown }> = {
  createState: (_c, input: { start?: unknown } | undefined) => ({ count: typeof input?.start === "number" ? input.start : 0, input: input ?? null }),
  actions: {
    increment: (c, n = 1) => (c.state.count += n),
    get: (c) => c.state.count,
    input: (c) => c.state.input,
    echo: (_c, ...args) => args,
    fail: () => {
      throw Object.assign(new Error("it failed"), { public: true, code: "bad_thing", metadata: { why: "because", n: 3 } });
    },
    crash: () => {
      throw new Error("secret detail");
    },
  },
  onRequest: async (_c, request) => {
    const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
    return new Response(JSON.stringify({ url: request.url, method: request.method, body, header: request.headers.get("x-test") }), {
      status: 201,
      headers: { "content-type": "application/json", "x-from-actor": "yes" },
    });
  },
  // Queue messages are answered with what they carried.
  run: async (c) => {
    for await (const m of c.queue.iter()) await m.complete({ got: m.body });
  },
};

let runtime!: Awaited<ReturnType<typeof tempRuntime>>;
let server!: GatewayServer;
let url = "";

test.before(async () => {
  runtime = await tempRuntime({});
  // As a user module's definition: the gateway hides built-in actors from a caller without the token.
  runtime.rt.registerDefinition("counter", counter, "user");
  server = new GatewayServer({
    settings: { host: "127.0.0.1", port: 0, maxBodyBytes: 64 * 1024, inspector: { token: "", production: false } },
    runtime: () => runtime.rt,
    log: silentLogger,
  });
  url = await server.start();
});
test.after(async () => {
  await server?.stop();
  await runtime?.dispose();
});

for (const encoding of ["json", "cbor", "bare"] as const) {
  // One client per encoding, shared by its tests; each test uses actors of its own keys.
  let client: any;
  const name = (behaviour: string) => `the RivetKit client over ${encoding}, in-process: ${behaviour}`;
  const keyFor = (label: string) => [`${label}-${encoding}`, "a/b", ""];
  const counter = (label: string) => client.counter.getOrCreate(keyFor(label), { createWithInput: { start: 10, bytes: new Uint8Array([1, 2, 3]) } });

  test.before(() => {
    client = createClient<any>({ endpoint: url, encoding, disableMetadataLookup: false } as any) as any;
  });
  test.after(async () => {
    await client?.dispose?.();
  });

  test(name("getOrCreate creates the actor and its actions change and return the state"), async () => {
    const h = counter("state");
    assert.is(await h.increment(5), 15);
    assert.is(await h.get(), 15);
  });

  test(name("createWithInput reaches the runtime, Uint8Array included"), async () => {
    const input = await counter("input").input();
    assert.is(input.start, 10);
    assert.equal([...input.bytes], [1, 2, 3]);
  });

  test(name("BigInt, Uint8Array, $-prefixed arrays and null round-trip as arguments and results"), async () => {
    assert.equal(await counter("echo").echo(1n, new Uint8Array([9]), ["$x", 1], { a: null }), [1n, new Uint8Array([9]), ["$x", 1], { a: null }]);
  });

  test(name("get by key and getForId reach the existing actor"), async () => {
    const h = counter("lookup");
    await h.increment(5);
    const id = await h.resolve();
    assert.is(await client.counter.get(keyFor("lookup")).get(), 15);
    assert.is(await client.counter.getForId(id).get(), 15);
  });

  test(name("create makes a new actor with its input"), async () => {
    const created = await client.counter.create([`c-${encoding}`], { input: { start: 100 } });
    assert.is(await created.get(), 100);
  });

  test(name("a public user error from an action arrives whole"), async () => {
    await assertUserErrorReachesClient(counter("user-error"));
  });

  test(name("an internal error from an action arrives without its detail"), async () => {
    await assertInternalErrorHidesDetail(counter("internal-error"));
  });

  test(name("fetch reaches the actor's request handler and returns its Response"), async () => {
    const response = await counter("fetch").fetch("/some/path?x=1", { method: "POST", body: "hello", headers: { "x-test": "t" } });
    assert.is(response.status, 201);
    assert.is(response.headers.get("x-from-actor"), "yes");
    assert.equal(await response.json(), { url: "http://actor/some/path?x=1", method: "POST", body: "hello", header: "t" });
  });

  test(name("queue send is accepted, and with wait answers the completion"), async () => {
    const h = counter("queue");
    await h.send("jobs", { n: 1 });
    const reply = await h.send("jobs", { n: 2 }, { wait: true, timeout: 1000 });
    assert.equal(reply, { status: "completed", response: { got: { n: 2 } } });
  });
}

const withVersion = (bytes: Uint8Array) => Buffer.concat([Buffer.from([3, 0]), Buffer.from(bytes)]);
const ab = (b: Uint8Array) => b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) as ArrayBuffer;

const samples = [new Uint8Array([]), new Uint8Array([1, 2, 3]), new Uint8Array(300).map((_, i) => i & 0xff)];

test("BARE HttpActionResponse encodes byte for byte as RivetKit's v3 schema", () => {
  for (const data of samples) {
    assert.equal(Buffer.from(ours.encodeActionResponse(data)), withVersion(v3.encodeHttpActionResponse({ output: ab(data) })));
  }
});

test("BARE HttpActionRequest from RivetKit's v3 schema decodes to its args", () => {
  for (const data of samples) {
    assert.equal(Buffer.from(ours.decodeActionRequest(withVersion(v3.encodeHttpActionRequest({ args: ab(data) })))), Buffer.from(data));
  }
});

test("BARE HttpResponseError, with and without metadata, encodes byte for byte as RivetKit's v3 schema", () => {
  for (const data of samples) {
    for (const meta of [null, data]) {
      assert.equal(
        Buffer.from(ours.encodeResponseError("user", "bad_thing", "it failed ✓", meta)),
        withVersion(v3.encodeHttpResponseError({ group: "user", code: "bad_thing", message: "it failed ✓", metadata: meta ? ab(meta) : null })),
      );
    }
  }
});

test("BARE HttpQueueSendResponse, with and without a response, encodes byte for byte as RivetKit's v3 schema", () => {
  for (const data of samples) {
    for (const response of [null, data]) {
      assert.equal(
        Buffer.from(ours.encodeQueueSendResponse("completed", response)),
        withVersion(v3.encodeHttpQueueSendResponse({ status: "completed", response: response ? ab(response) : null })),
      );
    }
  }
});

test("BARE HttpQueueSendRequest from RivetKit's v3 schema decodes body, name, wait and timeout", () => {
  for (const data of samples) {
    for (const [name, wait, timeout] of [
      [null, null, null],
      ["jobs", true, 5000n],
      ["j", false, 2n ** 40n],
    ] as const) {
      const decoded = ours.decodeQueueSendRequest(withVersion(v3.encodeHttpQueueSendRequest({ body: ab(data), name, wait, timeout })));
      assert.equal(Buffer.from(decoded.body), Buffer.from(data));
      assert.equal([decoded.name, decoded.wait, decoded.timeout], [name, wait, timeout]);
    }
  }
});

test("BARE decoding throws on a wrong version or a truncated message", () => {
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
