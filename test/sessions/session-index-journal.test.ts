// The session listing on the one journal (daemon/agent/session-index.ts over
// daemon/store/journal.ts): a home written by the previous version (snapshot, journal lines,
// a torn last line left by a kill) loads as it was; a change appended after it starts a line of
// its own; a fold moves the journal into the snapshot with the one atomic write and empties it.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type IndexEntry, SessionIndex } from "../../daemon/agent/session-index.js";
import { tempHome } from "../helpers/cli.js";

const entry = (id: string, title: string, updatedAt: number): IndexEntry => ({
  id,
  actorId: `actor-${id}`,
  title,
  kind: "chat",
  model: "m",
  provider: "p",
  profile: "default",
  parentId: null,
  createdAt: 1,
  updatedAt,
  messageCount: 2,
  usage: { prompt: 1, completion: 1, total: 2 },
});

/** What the previous version left: sessions a and b in the snapshot; a retitled, b removed and c added in the journal; a torn line. */
function oldHome(dataDir: string): void {
  const dir = join(dataDir, "agent");
  mkdirSync(dir, { recursive: true });
  const { kind: _kind, ...legacyA } = entry("a", "first", 10);
  writeFileSync(
    join(dir, "sessions.json"),
    JSON.stringify({ kind: "session-index", schemaVersion: 1, data: { sessions: { a: legacyA, b: entry("b", "second", 20) } } }),
  );
  writeFileSync(
    join(dir, "sessions.jsonl"),
    `${JSON.stringify({ p: entry("a", "first, retitled", 30) })}\n${JSON.stringify({ d: "b" })}\n${JSON.stringify({ p: entry("c", "third", 40) })}\n{"p":{"id":"d","ti`,
  );
}

test("a home written by the previous version loads: snapshot, journal lines, the torn last line cut", async () => {
  const { home, cleanup } = tempHome("sij");
  try {
    oldHome(home);
    const index = await SessionIndex.open(home);
    assert.equal(
      index.list().map((e) => [e.id, e.title, e.kind]),
      [
        ["c", "third", "chat"],
        ["a", "first, retitled", "chat"],
      ],
    );
    const journal = join(home, "agent", "sessions.jsonl");
    assert.not.match(readFileSync(journal, "utf8"), /"id":"d"/, "the torn line is cut from the file");
    await index.put(entry("e", "fifth", 50));
    index.close();
    const lines = readFileSync(journal, "utf8").split("\n");
    assert.equal(JSON.parse(lines[3]!).p.id, "e", "the new line starts a line of its own");
    const again = await SessionIndex.open(home);
    assert.equal(
      again.list().map((e) => e.id),
      ["e", "c", "a"],
    );
    // A removal folds: the snapshot holds the listing and the journal is empty.
    await again.remove("c");
    again.close();
    assert.is(readFileSync(journal, "utf8"), "");
    const snapshot = JSON.parse(readFileSync(join(home, "agent", "sessions.json"), "utf8"));
    assert.equal(Object.keys(snapshot.data.sessions).sort(), ["a", "e"]);
    assert.equal(
      (await SessionIndex.open(home)).list().map((e) => e.id),
      ["e", "a"],
    );
  } finally {
    cleanup();
  }
});

test.run();
