// The unmodified RivetKit 2.2.1 client (`createClient(endpoint)`) drives the real daemon in
// each of its encodings.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createClient } from "rivetkit/client";
import { assertActionErrorsReachClient } from "./client-errors.js";
import { startDaemon, type TestDaemon } from "./daemon.js";

let d: TestDaemon;
test.before(async () => {
  d = await startDaemon();
});
test.after(async () => {
  await d?.dispose();
});

for (const encoding of ["json", "cbor", "bare"] as const) {
  test(`rivetkit client (${encoding}) against the daemon`, async () => {
    const client = createClient<any>({ endpoint: d.url, encoding } as any) as any;
    try {
      const key = [`k-${encoding}`, "a/b", ""];
      const h = client.counter.getOrCreate(key, { createWithInput: { start: 10, bytes: new Uint8Array([1, 2, 3]) } });
      assert.is(await h.increment(5), 15);
      assert.is(await h.increment(), 16);
      assert.is(await h.get(), 16);
      const input = await h.input();
      assert.is(input.start, 10);
      assert.equal([...input.bytes], [1, 2, 3]);
      assert.equal(await h.key(), key);
      assert.equal(await h.echo("s", 1.5, null, { a: [1, { b: true }] }, ["$x", 1]), ["s", 1.5, null, { a: [1, { b: true }] }, ["$x", 1]]);
      assert.equal(await h.echo(12n, new Uint8Array([9, 8])), [12n, new Uint8Array([9, 8])]);
      const id = await h.resolve();
      // A second getOrCreate with the same key finds the same actor (input ignored).
      assert.is(await client.counter.getOrCreate(key, { createWithInput: { start: 99 } }).resolve(), id);
      assert.is(await client.counter.get(key).get(), 16);
      assert.is(await client.counter.getForId(id).get(), 16);
      const created = await client.counter.create([`c-${encoding}`], { input: { start: 100 } });
      assert.is(await created.get(), 100);
      assert.is.not(await created.resolve(), id);
      await assertActionErrorsReachClient(h);
      try {
        await h.noSuchAction();
        assert.unreachable("should throw");
      } catch (error: any) {
        assert.is(`${error.group}.${error.code}`, "action.not_found");
      }
      const response = await h.fetch("/some/path?x=1", { method: "POST", body: "hello", headers: { "x-test": "t" } });
      assert.is(response.status, 201);
      assert.is(response.headers.get("x-from-actor"), "yes");
      assert.equal(await response.json(), { url: "http://actor/some/path?x=1", method: "POST", body: "hello", header: "t" });
      const w = client.worker.getOrCreate([`w-${encoding}`]);
      await w.send("jobs", { n: 1 });
      const reply = await w.send("jobs", { n: 2 }, { wait: true, timeout: 5000 });
      assert.equal(reply, { status: "completed", response: { got: { n: 2 }, name: "jobs" } });
      assert.ok((await w.done()) >= 2);
    } finally {
      await client.dispose?.();
    }
  });
}

test.run();
