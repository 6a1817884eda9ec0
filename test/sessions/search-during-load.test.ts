// The first search after a daemon start answers during the search index's load (issue 31): a
// real daemon on a temp home, a snapshot (after `sessions.reindex`) plus journal lines, then a
// start whose load is held between the snapshot's lines (AGENT_SEARCH_LOAD_PAUSE_MS, a test
// knob): searches issued at once, while `daemon status` still says the index is loading, return
// the same hits (sessions, messages, order, windows) as the same searches once it has loaded,
// and as before the restart.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { runCli, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

/** A made-up vocabulary, frequent words first (a Zipf-like draw), so queries hit many messages. */
let seed = 31;
const rand = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff), seed / 0x7fffffff);
const syllables = ["ka", "lo", "mi", "ru", "te", "zan", "qua", "bex", "dor", "fin", "gul", "hap", "jot", "vim", "wex", "yor"];
const word = (i: number) => `${syllables[i % 16]}${syllables[(i >> 4) % 16]}${syllables[(i >> 8) % 16]}x`;
const VOCAB = 3000;
const text = () => Array.from({ length: 10 + Math.floor(rand() * 10) }, () => word(Math.floor(rand() ** 2 * VOCAB))).join(" ");
const messages = (n: number, extra = ""): StoredMessage[] =>
  Array.from({ length: n }, (_, i) => ({ role: i % 2 ? "assistant" : "user", content: `${text()}${i === 3 ? ` ${extra}` : ""}` }) as StoredMessage);

const queries = [word(0), word(1), word(7), word(300), `${word(2)} ${word(5)}`, word(40).slice(0, 5), "latecomer", `${word(0)} latecomer`, "nothingmatches"];

const { home, cleanup } = tempHome("asl");
let client: DaemonClient | null = null;
test.after(async () => {
  client?.close();
  await runCli(["daemon", "stop"], { home }).catch(() => undefined);
  cleanup();
});

type Results = Awaited<ReturnType<DaemonClient["call"]>>;
const searchAll = async (c: DaemonClient): Promise<Results[]> => {
  const out: Results[] = [];
  for (const query of queries) out.push(await c.call("sessions.search", { query, limit: 10, window: 1 }));
  return out;
};
const searchStatus = async (c: DaemonClient): Promise<string> =>
  ((await c.call("daemon.status", {})) as { components: Record<string, { detail?: string }> }).components.search?.detail ?? "";

test("a search during the index load returns the same hits as after it", async () => {
  assert.is((await runCli(["daemon", "start"], { home })).code, 0);
  client = await connectDaemon({ home });
  for (let s = 0; s < 24; s++) {
    const { session } = await client.call("chat.sessions.create", { title: `s${s}`, ...(s % 6 === 5 ? { kind: "kanban" as const } : {}) });
    await client.call("chat.sessions.append", { sessionId: session.id, messages: messages(40) as never });
  }
  // The snapshot; then journal lines: new sessions, and more messages of a folded one.
  await client.call("sessions.reindex", {});
  for (let s = 0; s < 3; s++) {
    const { session } = await client.call("chat.sessions.create", { title: `late${s}` });
    await client.call("chat.sessions.append", { sessionId: session.id, messages: messages(8, "latecomer") as never });
  }
  const first = (await client.call("sessions.list", {})).sessions.find((x) => x.title === "s0")!;
  await client.call("chat.sessions.append", { sessionId: first.id, messages: messages(6, "latecomer") as never });
  // What the daemon answered before the restart (its index built in order): the reference.
  const before = await searchAll(client);
  client.close();
  assert.is((await runCli(["daemon", "stop"], { home })).code, 0);

  // Each snapshot line waits 400 ms: the load lasts seconds, the searches take milliseconds.
  assert.is((await runCli(["daemon", "start"], { home, env: { AGENT_SEARCH_LOAD_PAUSE_MS: "400" } })).code, 0);
  client = await connectDaemon({ home });
  const during = await searchAll(client);
  assert.match(await searchStatus(client), /loading/, "the searches ran during the load");
  await waitFor("the search index to load", async () => /messages indexed/.test(await searchStatus(client!)), 20_000);
  const after = await searchAll(client);
  for (let i = 0; i < queries.length; i++) {
    assert.equal(during[i], after[i], `results of ${JSON.stringify(queries[i])} during and after the load`);
    assert.equal(after[i], before[i], `results of ${JSON.stringify(queries[i])} after the load and before the restart`);
  }
  const hits = (i: number) => (after[i] as { results: unknown[] }).results.length;
  assert.ok(hits(0) >= 5 && hits(4) > 0 && hits(5) > 0, "common words, two words and a prefix find messages");
  assert.is(hits(6), 4, "the journal's messages are found (3 new sessions and one folded one)");
  assert.is(hits(8), 0);
});

test.run();
