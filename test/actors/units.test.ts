import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseActorKey, serializeActorKey } from "../../shared/actor-key.js";
import { actor, UserError } from "../../shared/actor-api.js";
import { decodeValue, encodeValue } from "../../daemon/actors/codec.js";
import { toCallerError } from "../../daemon/actors/errors.js";
import { BucketedKv } from "../../daemon/actors/storage/kv.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { tempRuntime } from "./helpers.js";

test("the key codec escapes slashes and backslashes, marks empty parts and the empty key", () => {
  assert.is(serializeActorKey(["a", "b"]), "a/b");
  assert.is(serializeActorKey(["a/b", "c\\d"]), "a\\/b/c\\\\d");
  assert.is(serializeActorKey([]), "/");
  assert.is(serializeActorKey([""]), "\\0");
  assert.is(serializeActorKey(["x", ""]), "x/\\0");
  for (const parts of [["a", "b"], ["a/b", "c\\d"], [], [""], ["x", ""], ["", ""], ["\\0"], ["/"], ["a\\", "/b"]]) {
    assert.equal(parseActorKey(serializeActorKey(parts)), parts, JSON.stringify(parts));
  }
  assert.equal(parseActorKey("plain"), ["plain"]);
});

test("a UserError and any Error with public: true become user errors with code and metadata", () => {
  const a = toCallerError(new UserError("no", { code: "denied", metadata: { who: "x" } }), silentLogger, {});
  assert.is(a.code, "user.denied");
  assert.is(a.message, "no");
  assert.equal(a.metadata, { who: "x" });
  const b = toCallerError(Object.assign(new Error("plain"), { public: true }), silentLogger, {});
  assert.is(b.code, "user.user_error");
  const c = toCallerError(new Error("hidden"), silentLogger, {});
  assert.is(c.code, "internal.error");
  assert.not.match(c.message, /hidden/);
  const def = { actions: { a: () => 1 } };
  assert.is(actor(def), def);
});

test("stored values keep bytes and BigInts", () => {
  const v = { b: new Uint8Array([1, 2, 255]), n: 12345678901234567890n, s: "x" };
  assert.equal(decodeValue(encodeValue(v)), v);
  assert.is(encodeValue(undefined), "null");
});

test("user KV spreads keys over bucket files so a put rewrites a small part of a large KV", async () => {
  const h = await tempRuntime({});
  try {
    const dir = join(h.dir, "kvtest");
    const kv = new BucketedKv(dir);
    await Promise.all(Array.from({ length: 5000 }, (_, i) => kv.put(`message:${i}`, `value ${i}`)));
    const files = readdirSync(dir).filter((f) => f.endsWith(".json"));
    const sizes = files.map((f) => statSync(join(dir, f)).size);
    const total = sizes.reduce((a, b) => a + b, 0);
    assert.ok(files.length > 200, `${files.length} bucket files`);
    assert.ok(Math.max(...sizes) < total / 50, `largest bucket ${Math.max(...sizes)} of ${total}`);
    assert.is(Buffer.from((await kv.get("message:4321"))!).toString(), "value 4321");
    assert.is((await kv.list("message:")).length, 5000);
    const fresh = new BucketedKv(dir);
    assert.is(Buffer.from((await fresh.get("message:7"))!).toString(), "value 7");
  } finally {
    await h.dispose();
  }
});

test.run();
