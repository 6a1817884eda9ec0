import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome } from "./daemon-helpers.js";

// A user actor's state lives in its runner worker; the daemon keeps the text each answer
// carries, writes it before answering, and decodes it only when something reads it.
const MODULES = {
  "counter.mjs": `export const counter = {
  state: { count: 0 },
  actions: { increment: (c, n = 1) => (c.state.count += n), get: (c) => c.state.count },
  options: { sleepTimeout: 600000 },
};`,
  "notes.mjs": `export const notes = {
  state: { items: [] },
  actions: { add: (c, text) => c.state.items.push(text), count: (c) => c.state.items.length },
  options: { sleepTimeout: 600000 },
};`,
};

let h!: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome(MODULES);
});
test.after(async () => {
  await h.dispose();
});

const create = (name: string, key: string) => h.createActor(name, key);
const call = (id: string, action: string, args: unknown[] = []) => h.action(id, action, args);

async function inspectorState(id: string): Promise<unknown> {
  const r = await fetch(`${h.url}/gateway/${id}/inspector/state`);
  assert.is(r.status, 200);
  return ((await r.json()) as any).state;
}

/** The newest line of `name` in the small-file journal, if it is there. */
function journaled(name: string): boolean {
  const dir = join(h.home, "data", "actors", "index");
  return readdirSync(dir)
    .filter((f) => f.startsWith("files.journal."))
    .some((f) => readFileSync(join(dir, f), "utf8").includes(`${name}\t{`));
}

test("every state change a runner actor answered is on disk at once: kill -9 after the last answer loses none, hot or quiet", async () => {
  const hot = await create("counter", "hot");
  const quiet = await create("counter", "quiet");
  // Written many times a second: the hot actor's file goes to the journal, not a rename per turn.
  for (let i = 0; i < 20; i++) await call(hot, "increment", [1]);
  await Promise.all(Array.from({ length: 30 }, () => call(hot, "increment", [2])));
  assert.is(await call(quiet, "increment", [5]), 5);
  assert.is(await call(hot, "increment", [1]), 81);
  assert.ok(journaled(`${hot}.json`), "the hot actor's writes went to the small-file journal");

  await h.killAndRestart();
  assert.is(await call(hot, "get"), 81);
  assert.is(await call(quiet, "get"), 5);
});

test("the inspector reads the state the runner's actor last answered with, and a state it writes reaches the actor", async () => {
  const id = await create("notes", "inspected");
  await call(id, "add", ["a"]);
  await call(id, "add", ["b"]);
  assert.equal(await inspectorState(id), { items: ["a", "b"] });
  // Read twice without a change in between: the same value.
  assert.equal(await inspectorState(id), { items: ["a", "b"] });
  await call(id, "add", ["c"]);
  assert.equal(await inspectorState(id), { items: ["a", "b", "c"] });

  const patch = await fetch(`${h.url}/gateway/${id}/inspector/state`, {
    method: "PATCH",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ state: { items: ["x"] } }),
  });
  assert.is(patch.status, 200);
  assert.is(await call(id, "count"), 1);
  await call(id, "add", ["y"]);
  assert.equal(await inspectorState(id), { items: ["x", "y"] });
});

test.run();
