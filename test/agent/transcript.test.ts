import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ActorKv } from "../../daemon/actors/types.js";
import { CHUNK_SIZE, newTranscriptCache, Transcript } from "../../daemon/agent/transcript.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";

/** An in-memory KV that counts chunk writes. */
function memoryKv() {
  const map = new Map<string, string>();
  const kv = {
    puts: 0,
    get: async (k: string) => (map.has(k) ? new TextEncoder().encode(map.get(k)!) : null),
    getJson: async (k: string) => (map.has(k) ? JSON.parse(map.get(k)!) : null),
    put: async (k: string, v: string) => void map.set(k, v),
    putJson: async (k: string, v: unknown) => {
      kv.puts++;
      map.set(k, JSON.stringify(v));
    },
    delete: async (k: string) => void map.delete(k),
    list: async () => [],
  };
  return kv;
}

function transcript(kv: ActorKv, state: { count: number }) {
  return new Transcript(kv, newTranscriptCache(), { get: () => state.count, set: async (n) => void (state.count = n) });
}

const msg = (i: number): StoredMessage => ({ role: "user", content: `m${i}` });

test("a deferred append is read back at once but reaches the chunk and the persisted count only with the next write", async () => {
  const kv = memoryKv();
  const state = { count: 0 };
  const t = transcript(kv as unknown as ActorKv, state);
  await t.append([msg(0)]);
  assert.equal({ puts: kv.puts, count: state.count }, { puts: 1, count: 1 });
  await t.appendAt(1, [msg(1)], { defer: true });
  await t.appendAt(2, [msg(2)], { defer: true });
  assert.is(t.length, 3);
  assert.equal(
    (await t.read()).map((m) => m.content),
    ["m0", "m1", "m2"],
  );
  assert.equal({ puts: kv.puts, count: state.count }, { puts: 1, count: 1 }, "nothing written yet");
  // A fresh reader (after a crash) sees only what is on disk.
  assert.equal(
    (await transcript(kv as unknown as ActorKv, { ...state }).read()).map((m) => m.content),
    ["m0"],
  );
  await t.flush();
  assert.equal({ puts: kv.puts, count: state.count }, { puts: 2, count: 3 });
  assert.equal(
    (await transcript(kv as unknown as ActorKv, { ...state }).read()).map((m) => m.content),
    ["m0", "m1", "m2"],
  );
});

test("a replay after a crash writes the lost deferred messages again at their positions, without duplicates", async () => {
  const kv = memoryKv();
  const state = { count: 0 };
  const t = transcript(kv as unknown as ActorKv, state);
  await t.append([msg(0), msg(1)]);
  await t.appendAt(2, [msg(2)], { defer: true }); // lost: the process dies here
  const after = transcript(kv as unknown as ActorKv, state);
  await after.appendAt(1, [msg(1)]); // replayed, already there
  await after.appendAt(2, [msg(2)], { defer: true });
  await after.appendAt(3, [msg(3)]);
  assert.equal(
    (await transcript(kv as unknown as ActorKv, state).read()).map((m) => m.content),
    ["m0", "m1", "m2", "m3"],
  );
});

test("deferred appends still write each chunk once it is full", async () => {
  const kv = memoryKv();
  const state = { count: 0 };
  const t = transcript(kv as unknown as ActorKv, state);
  for (let i = 0; i < CHUNK_SIZE + 3; i++) await t.appendAt(i, [msg(i)], { defer: true });
  assert.equal({ puts: kv.puts, count: state.count }, { puts: 1, count: CHUNK_SIZE });
  await t.flush();
  assert.is(state.count, CHUNK_SIZE + 3);
  assert.is((await transcript(kv as unknown as ActorKv, state).read()).length, CHUNK_SIZE + 3);
});

test.run();
