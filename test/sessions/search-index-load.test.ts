// The search index answers during its load (issue 31): a query imports its terms' lines of the
// snapshot first, with the journal's messages already in, and returns the same hits as once the
// whole snapshot is in. In-process, on a temp folder; the fold runs in the build's thread.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type SearchHit, SearchIndex } from "../../daemon/agent/search/search-index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";

/** A made-up vocabulary: more terms than one snapshot line holds, so the map is several lines. */
let seed = 7;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
const syllables = ["ka", "lo", "mi", "ru", "te", "zan", "qua", "bex", "dor", "fin", "gul", "hap", "jot", "vim", "wex", "yor"];
const word = (i: number) => `${syllables[i % 16]}${syllables[(i >> 4) % 16]}${syllables[(i >> 8) % 16]}x`;
const VOCAB = 6000;
const text = () => Array.from({ length: 12 }, () => word(Math.floor(rand() ** 1.5 * VOCAB))).join(" ");
const messages = (n: number): StoredMessage[] =>
  Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: text() }) as StoredMessage);
const kindOf = (id: string) => (id.startsWith("k") ? ("kanban" as const) : ("chat" as const));

const queries = [
  word(0),
  word(1),
  word(5),
  word(777),
  word(4321),
  `${word(2)} ${word(3)}`,
  `${word(10)} ${word(2500)}`,
  word(42).slice(0, 5), // a prefix
  "jour", // words only the journal holds (below)
  "journalword",
  `${word(1)} journalword`,
  "nothingmatches",
];

const dir = mkdtempSync(join(tmpdir(), "agent-search-load-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

test("a search during the index load returns the same hits as after it", async () => {
  const first = new SearchIndex(dir, kindOf);
  await first.ready();
  for (let s = 0; s < 40; s++) first.add(`${s % 5 === 0 ? "k" : "c"}${s}`, 0, messages(40));
  await first.fold();
  // Left in the journal: new sessions, more messages of a folded one, some with their own words.
  first.add("c1", 40, messages(10));
  for (let s = 40; s < 46; s++) first.add(`c${s}`, 0, [...messages(8), { role: "user", content: `journalword ${word(1)} journey` } as StoredMessage]);
  first.add("k45", 0, messages(5));
  // What the index answered before the restart (its ids added in order): the reference.
  const before: SearchHit[][] = [];
  for (const q of queries) before.push(await first.search(q, () => true));
  await first.close();
  const snapshot = readFileSync(join(dir, "index.json"), "utf8").split("\n");
  const mapLines = snapshot.filter((l) => l.startsWith("chat\t1.map\t")).length;
  assert.ok(mapLines >= 2, `the snapshot's map is several lines (${mapLines})`);

  const index = new SearchIndex(dir, kindOf);
  let loaded = false;
  void index.loaded().then(() => (loaded = true));
  void index.ready();
  const during: SearchHit[][] = [];
  for (const q of queries) {
    during.push(await index.search(q, () => true));
    assert.not.ok(loaded, `the load was over before the query ${q}`);
  }
  await index.loaded();
  for (let i = 0; i < queries.length; i++) {
    const after = await index.search(queries[i]!, () => true);
    assert.equal(during[i], after, `hits of ${queries[i]}`);
    assert.equal(after, before[i], `hits of ${queries[i]} as before the restart`);
  }
  assert.ok(during[9]!.length >= 6, "the journal's messages are found during the load");
  assert.ok(during[0]!.length > 0 && during[5]!.length > 0);
  await index.close();
});

test.run();
