// The search index's store (index-store.ts, issue 31): messages go straight into FlexSearch's
// map exactly as its own `add` puts them; the snapshot (format 4) is read head first and then a
// line at a time by offset, a query's lines alone before the rest; a snapshot of another format
// is dropped with its journal, so the catch-up indexes every session from its start.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Index } from "flexsearch";
import { test } from "uvu";
import * as assert from "uvu/assert";
import {
  addDoc,
  applyLine,
  DocTable,
  emptyState,
  PendingDocs,
  termsStartingWith,
  FORMAT,
  openSnapshot,
  readSnapshot,
  writeSnapshot,
} from "../../daemon/agent/search/index-store.js";
import { SearchIndex } from "../../daemon/agent/search/search-index.js";
import { waitFor } from "../helpers/wait.js";

let seed = 5;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
const term = (i: number) => `t${i.toString(36)}`;
/** A message's terms: 1..40 of them, repeats included (a term counts once, at its first position). */
const terms = (vocab: number) => Array.from({ length: 1 + Math.floor(rand() * 40) }, () => term(Math.floor(rand() ** 2 * vocab)));

const dir = mkdtempSync(join(tmpdir(), "agent-search-store-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

type Internals = { map: Map<string, Array<number[] | undefined>>; reg: Set<number> };
const internals = (index: Index) => index as unknown as Internals;
/** An index's map and register as JSON, terms sorted (compared as strings: a diff of two large structures takes uvu minutes). */
const plain = (index: Index) =>
  JSON.stringify({
    map: [...internals(index).map].sort(([a], [b]) => (a < b ? -1 : 1)).map(([t, slots]) => [t, Array.from(slots, (ids) => ids ?? null)]),
    reg: [...internals(index).reg].sort((a, b) => a - b),
  });
/** The terms of both parts' maps that start with `prefix`. */
const termsFrom = (state: ReturnType<typeof emptyState>, prefix: string) =>
  [...internals(state.chat).map.keys(), ...internals(state.other).map.keys()].filter((t) => t.startsWith(prefix));
const same = (a: string, b: string, what: string) => assert.ok(a === b, `${what}: ${a.length} and ${b.length} characters differ`);

test("addDoc puts a message's terms in the slots FlexSearch's own add does", () => {
  const options = { tokenize: "strict", resolution: 9, encode: (text: string) => text.split(" ").filter(Boolean) } as const;
  const theirs = new Index(options);
  const ours = new Index(options);
  for (let id = 0; id < 400; id++) {
    const t = terms(300);
    theirs.add(id, t.join(" "));
    addDoc(ours, id, t);
  }
  same(plain(ours), plain(theirs), "the maps");
  for (const q of [term(0), `${term(1)} ${term(2)}`, term(50)]) assert.equal(ours.search(q, { limit: 1000 }), theirs.search(q, { limit: 1000 }), q);
});

test("pending messages: a query's terms first, the rest in steps, messages added between; the same map as adding them in order", () => {
  const direct = emptyState();
  const loading = emptyState();
  const pending = new PendingDocs();
  let id = 0;
  const add = (n: number) => {
    for (let k = 0; k < n; k++, id++) {
      const t = terms(200);
      const part = id % 5 === 4 ? ("other" as const) : ("chat" as const);
      addDoc(direct[part], id, t);
      pending.add(loading, id, part, t.join(" "));
    }
  };
  add(150);
  pending.materialize(loading, term(0));
  pending.materialize(loading, term(3));
  const shortest = (ts: string[], max: number) => [...new Set(ts)].sort((a, b) => a.length - b.length || (a < b ? -1 : 1)).slice(0, max);
  assert.equal(termsStartingWith(loading, "t1", 5, pending.termsStartingWith("t1")), shortest(termsFrom(direct, "t1"), 5), "prefix terms of pending messages");
  pending.step(loading, 40);
  add(30);
  pending.materialize(loading, term(1));
  pending.materialize(loading, term(0));
  pending.step(loading, 100);
  pending.materialize(loading, term(7));
  add(20);
  while (pending.step(loading, 33)) {}
  same(plain(loading.chat), plain(direct.chat), "the chat map");
  same(plain(loading.other), plain(direct.other), "the other map");
  assert.equal(termsStartingWith(loading, "t", 1000), shortest(termsFrom(direct, "t"), 1000), "every term in the term list after the steps");
});

test("the id table: set, get, delete and size, growing past its first capacity", () => {
  const table = new DocTable(2);
  table.set(0, "a", 0);
  table.set(5, "b", 7);
  table.set(3000, "a", 12);
  table.set(5, "b", 8);
  assert.is(table.size, 3);
  assert.equal(
    [table.get(0), table.get(5), table.get(3000), table.get(1), table.get(99999), table.get(-1)],
    [["a", 0], ["b", 8], ["a", 12], undefined, undefined, undefined],
  );
  table.delete(5);
  table.delete(5);
  table.delete(77);
  assert.is(table.size, 2);
  assert.is(table.get(5), undefined);
  assert.equal(table.setSession("c", [5, 1, 4000, 2]), [5, 4000]);
  assert.equal([table.get(5), table.get(4000), table.size], [["c", 1], ["c", 2], 4]);
});

test("a format 4 snapshot: its head alone at open, a query's lines on demand, then the rest; the same state as written", async () => {
  const state = emptyState();
  for (let s = 0; s < 60; s++)
    applyLine(state, {
      s: `c${s}`,
      ...(s % 4 === 3 ? { k: 1 as const } : {}),
      w: Array.from({ length: 30 }, (_, i) => [i, terms(4000).join(" ")] as [number, string]),
      n: 30,
    });
  const file = join(dir, "index.json");
  await writeSnapshot(file, state);
  const head = JSON.parse(readFileSync(file, "utf8").split("\n")[0]!) as { format: number; lines: Array<[string, string, string, number]> };
  assert.is(head.format, FORMAT);
  const maps = head.lines.filter(([, key]) => key.endsWith(".map"));
  assert.ok(maps.length >= 3, `the map is cut into lines (${maps.length})`);
  for (const [, , , bytes] of maps) assert.ok(bytes < 64 * 1024 + 4096, `a map line of ${bytes} bytes`);

  const loader = openSnapshot(file);
  assert.ok(loader && loader !== "stale");
  assert.is(internals(loader.state.chat).map.size, 0, "no map line is read at open");
  assert.is(loader.state.docs.size, state.docs.size, "the id table is in the head");
  loader.ensure(term(7));
  const some = internals(loader.state.chat).map.size;
  assert.ok(some > 0 && some < internals(state.chat).map.size, `one line of the chat map is in (${some} terms)`);
  assert.equal(internals(loader.state.chat).map.get(term(7)), internals(state.chat).map.get(term(7)));
  while (loader.importNext()) {}
  same(plain(loader.state.chat), plain(state.chat), "the chat index");
  same(plain(loader.state.other), plain(state.other), "the other index");
  const read = await readSnapshot(file);
  same(plain(read!.chat), plain(state.chat), "the chat index read whole");
});

test("a format 3 snapshot (the version before) is read whole, answers the same, and its next fold writes format 4", async () => {
  const current = mkdtempSync(join(dir, "v4-"));
  const first = new SearchIndex(current);
  await first.ready();
  for (let s = 0; s < 12; s++)
    first.add(
      `c${s}`,
      0,
      Array.from({ length: 20 }, () => ({ role: "user" as const, content: terms(500).join(" ") })),
    );
  await first.fold();
  first.add("c0", 20, [{ role: "user", content: `${term(3)} afterword` }]);
  const queries = [term(0), term(3), `${term(1)} ${term(2)}`, "afterword", "t1"];
  const before: unknown[] = [];
  for (const q of queries) before.push(await first.search(q, () => true));
  await first.close();
  // The same snapshot as format 3 wrote it: the lines after the head are alike, the head has no offsets.
  const [headLine, ...rest] = readFileSync(join(current, "index.json"), "utf8").split("\n");
  const { lines: _, ...head } = JSON.parse(headLine!) as Record<string, unknown>;
  writeFileSync(join(current, "index.json"), [JSON.stringify({ ...head, format: 3 }), ...rest].join("\n"));

  const index = new SearchIndex(current);
  for (let i = 0; i < queries.length; i++) assert.equal(await index.search(queries[i]!, () => true), before[i], queries[i]);
  assert.is(index.indexed("c0"), 21);
  await waitFor("the fold to write format 4", () => JSON.parse(readFileSync(join(current, "index.json"), "utf8").split("\n")[0]!).format === FORMAT);
  await index.close();
  const again = new SearchIndex(current);
  for (let i = 0; i < queries.length; i++) assert.equal(await again.search(queries[i]!, () => true), before[i], `${queries[i]} after the rewrite`);
  await again.close();
});

test("a snapshot of another format is dropped with its journal: the index starts empty for the catch-up", async () => {
  const old = mkdtempSync(join(dir, "old-"));
  writeFileSync(join(old, "index.json"), `${JSON.stringify({ format: 2, next: 5, counts: { c1: 5 }, table: {}, terms: [] })}\nchat\t1.map\t[]\n`);
  writeFileSync(join(old, "journal.jsonl"), `${JSON.stringify({ s: "c1", w: [[5, "later word"]], n: 6 })}\n`);
  const index = new SearchIndex(old);
  await index.ready();
  assert.equal(index.sessions(), []);
  assert.is(index.indexed("c1"), 0, "c1 is indexed again from its first message");
  assert.is(readFileSync(join(old, "journal.jsonl"), "utf8"), "");
  await index.close();
});

test.run();
