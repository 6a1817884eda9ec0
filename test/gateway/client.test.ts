// The unmodified RivetKit 2.2.1 client (`createClient(endpoint)`) drives the real daemon in
// each of its encodings.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { assertInternalErrorHidesDetail, assertUserErrorReachesClient } from "./client-errors.js";
import { startDaemon, type TestDaemon } from "./daemon.js";

let d: TestDaemon;
test.before(async () => {
  d = await startDaemon();
});

for (const encoding of ["json", "cbor", "bare"] as const) {
  // One client per encoding, shared by its tests; each test uses actors of its own keys.
  let client: any;
  const name = (behaviour: string) => `the RivetKit client over ${encoding}: ${behaviour}`;
  /** A key with a "/" and an empty part, which must reach the daemon unchanged. */
  const keyFor = (label: string) => [`${label}-${encoding}`, "a/b", ""];
  const counter = (label: string) => client.counter.getOrCreate(keyFor(label), { createWithInput: { start: 10, bytes: new Uint8Array([1, 2, 3]) } });

  test.before(() => {
    client = createClient<any>({ endpoint: d.url, encoding } as any) as any;
  });
  test.after(async () => {
    await client?.dispose?.();
  });

  test(name("getOrCreate creates the actor and its actions change and return the state"), async () => {
    const h = counter("state");
    assert.is(await h.increment(5), 15);
    assert.is(await h.increment(), 16);
    assert.is(await h.get(), 16);
  });

  test(name("createWithInput reaches createState, Uint8Array included"), async () => {
    const input = await counter("input").input();
    assert.is(input.start, 10);
    assert.equal([...input.bytes], [1, 2, 3]);
  });

  test(name("the actor sees its key as given, with a '/' and an empty part"), async () => {
    assert.equal(await counter("key").key(), keyFor("key"));
  });

  test(name("action arguments and results round-trip: strings, numbers, null, nested objects and $-prefixed arrays"), async () => {
    const h = counter("echo");
    assert.equal(await h.echo("s", 1.5, null, { a: [1, { b: true }] }, ["$x", 1]), ["s", 1.5, null, { a: [1, { b: true }] }, ["$x", 1]]);
  });

  test(name("BigInt and Uint8Array arguments and results round-trip"), async () => {
    assert.equal(await counter("binary").echo(12n, new Uint8Array([9, 8])), [12n, new Uint8Array([9, 8])]);
  });

  test(name("a second getOrCreate with the same key finds the same actor (its input ignored)"), async () => {
    const id = await counter("again").resolve();
    assert.is(await client.counter.getOrCreate(keyFor("again"), { createWithInput: { start: 99 } }).resolve(), id);
  });

  test(name("get by key and getForId reach the existing actor"), async () => {
    const h = counter("lookup");
    await h.increment(6);
    const id = await h.resolve();
    assert.is(await client.counter.get(keyFor("lookup")).get(), 16);
    assert.is(await client.counter.getForId(id).get(), 16);
  });

  test(name("create makes a new actor with its input"), async () => {
    const id = await counter("existing").resolve();
    const created = await client.counter.create([`c-${encoding}`], { input: { start: 100 } });
    assert.is(await created.get(), 100);
    assert.is.not(await created.resolve(), id);
  });

  test(name("a public user error from an action arrives whole"), async () => {
    await assertUserErrorReachesClient(counter("user-error"));
  });

  test(name("an internal error from an action arrives without its detail"), async () => {
    await assertInternalErrorHidesDetail(counter("internal-error"));
  });

  test(name("an unknown action is action.not_found"), async () => {
    try {
      await counter("unknown-action").noSuchAction();
      assert.unreachable("should throw");
    } catch (error: any) {
      assert.is(`${error.group}.${error.code}`, "action.not_found");
    }
  });

  test(name("fetch reaches onRequest with method, path, body and headers and returns its Response"), async () => {
    const response = await counter("fetch").fetch("/some/path?x=1", { method: "POST", body: "hello", headers: { "x-test": "t" } });
    assert.is(response.status, 201);
    assert.is(response.headers.get("x-from-actor"), "yes");
    assert.equal(await response.json(), { url: "http://actor/some/path?x=1", method: "POST", body: "hello", header: "t" });
  });

  test(name("queue send delivers to the run loop, and with wait answers its completion"), async () => {
    const w = client.worker.getOrCreate([`w-${encoding}`]);
    await w.send("jobs", { n: 1 });
    const reply = await w.send("jobs", { n: 2 }, { wait: true, timeout: 5000 });
    assert.equal(reply, { status: "completed", response: { got: { n: 2 }, name: "jobs" } });
    assert.ok((await w.done()) >= 2);
  });
}

// After the clients' own after hooks (hooks run in the order they were added).
test.after(async () => {
  await d?.dispose();
});

test.run();
