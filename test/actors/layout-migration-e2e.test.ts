import { cpSync, existsSync, linkSync, mkdirSync, readdirSync, readFileSync, renameSync, rmdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { keepAliveJson } from "../helpers/http-json.js";
import { actorHome, waitFor } from "./daemon-helpers.js";

const MODULES = `
export const item = {
  state: { n: 0 },
  options: { sleepTimeout: 60000 },
  actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n },
};
`;

const SHARD = /^[0-9a-f]{2}$/;

/** Kept-alive sockets: the file makes ~3,000 calls, and fetch costs the test process ~2x the CPU per call. */
const request = keepAliveJson(50);
async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const { status, json } = await request(base, method, path, body);
  if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json)}`);
  return json;
}

const create = async (base: string, key: string): Promise<string> =>
  (await call(base, "PUT", "/actors", { name: "item", key, runner_name_selector: "default", crash_policy: "sleep" })).actor.actor_id;
const action = async (base: string, id: string, name: string): Promise<number> =>
  (await call(base, "POST", `/gateway/${id}/action/${name}`, { args: [] })).output;

/**
 * `n` actors, actor i incremented i % 3 + 1 times; the daemon stopped. Returns their ids. The
 * concurrent calls leave their files in the journal of small files, the last one-at-a-time
 * call writes each actor's own file: both are moved.
 */
async function populate(h: Awaited<ReturnType<typeof actorHome>>, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i += 50) {
    await Promise.all(
      Array.from({ length: Math.min(50, n - i) }, async (_, j) => {
        const id = await create(h.url, `k${i + j}`);
        ids[i + j] = id;
        for (let k = 0; k < (i + j) % 3; k++) await action(h.url, id, "inc");
      }),
    );
  }
  for (const id of ids) await action(h.url, id, "inc");
  await h.stop();
  return ids;
}

/**
 * Turn the home into what an older version left: every actor entry, the index and the journals
 * directly in data/actors, and the index snapshot in the one-line format of schema 2.
 */
function flatten(home: string): string {
  const dir = join(home, "data", "actors");
  for (const name of readdirSync(dir)) {
    if (!SHARD.test(name) && name !== "index") continue;
    for (const entry of readdirSync(join(dir, name))) renameSync(join(dir, name, entry), join(dir, entry));
    rmdirSync(join(dir, name));
  }
  const snapshot = join(dir, "index.json");
  const env = JSON.parse(readFileSync(snapshot, "utf8"));
  const { gen, fields, restartOnBoot, alarms, records } = env.data;
  writeFileSync(snapshot, JSON.stringify({ kind: env.kind, schemaVersion: 2, data: { gen, fields, restartOnBoot, alarms, records } }));
  return dir;
}

/**
 * The first three tests start from the same thing: 120 actors written by a daemon, then the home
 * turned into the flat layout. It is made once (a daemon start and ~500 gateway calls) and each
 * test gets its own copy, so each still migrates a home of its own.
 */
let template: { h: Awaited<ReturnType<typeof actorHome>>; ids: string[] };
test.before(async () => {
  const h = await actorHome({ "item.js": MODULES });
  const ids = await populate(h, 120);
  flatten(h.home);
  template = { h, ids };
});
test.after(async () => {
  await template?.h.dispose();
  request.close();
});

/** A copy of the flat home of 120 actors, its daemon not started; its data/actors and the actors' ids. */
async function flatHome(): Promise<{ h: Awaited<ReturnType<typeof actorHome>>; dir: string; ids: string[] }> {
  const h = await actorHome({}, { start: false });
  cpSync(template.h.home, h.home, { recursive: true });
  return { h, dir: join(h.home, "data", "actors"), ids: template.ids };
}

/** The entries left directly in data/actors besides the index folder and the shards. */
const flatLeft = (dir: string) => readdirSync(dir).filter((n) => n !== "index" && !SHARD.test(n));

/** Every actor answers with the state it had; every file of the store parses. */
async function assertIntact(base: string, dir: string, ids: string[]): Promise<void> {
  const states = await Promise.all(ids.map((id) => action(base, id, "get")));
  assert.equal(
    states.map((n, i) => n - ((i % 3) + 1)),
    ids.map(() => 0),
    "every actor kept its state",
  );
  const listed = await call(base, "GET", "/actors?name=item&limit=1000");
  assert.is(listed.actors.length, ids.length, "every actor is listed");
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !entry.name.endsWith(".json")) continue;
    assert.not.throws(() => JSON.parse(readFileSync(join(entry.parentPath, entry.name), "utf8")), `${entry.name} parses`);
  }
}

test("a home of the flat layout is migrated at start: every actor keeps its state and its files move into shard folders", async () => {
  const { h, dir, ids } = await flatHome();
  try {
    assert.ok(flatLeft(dir).length >= ids.length, "the home is flat");
    await h.start();
    assert.ok(existsSync(join(dir, "index", "index.json")), "the index moved into index/");
    await assertIntact(h.url, dir, ids);
    await waitFor("the background migration to finish", () => flatLeft(dir).length === 0, 10_000);
    const shards = readdirSync(dir).filter((n) => SHARD.test(n));
    assert.ok(shards.length > 50, `the actors are spread over ${shards.length} shard folders`);
    await h.stop();
    await h.start();
    await assertIntact(h.url, dir, ids);
  } finally {
    await h.dispose();
  }
});

test("a migration a crash stopped before its commit is redone by the next start", async () => {
  const { h, dir, ids } = await flatHome();
  try {
    // A kill -9 while the index files were being linked into index.tmp/ (not renamed yet).
    mkdirSync(join(dir, "index.tmp"));
    linkSync(join(dir, "index.json"), join(dir, "index.tmp", "index.json"));
    await h.start();
    assert.not.ok(existsSync(join(dir, "index.tmp")), "the half-made folder is gone");
    await assertIntact(h.url, dir, ids);
  } finally {
    await h.dispose();
  }
});

test("a migration a crash stopped after its commit, with some actors moved and others not, is finished by the next start", async () => {
  const { h, dir, ids } = await flatHome();
  try {
    // What a kill -9 leaves after index/ was committed: the flat index names not removed yet,
    // and the background migration stopped halfway.
    mkdirSync(join(dir, "index"));
    for (const n of readdirSync(dir).filter((n) => n.startsWith("index.") || n.startsWith("files.journal."))) linkSync(join(dir, n), join(dir, "index", n));
    await h.start();
    await waitFor("the background migration to finish", () => flatLeft(dir).length === 0, 10_000);
    await h.stop();
    // Half the actors back to the flat layout, as a stop halfway through the move leaves them.
    const half = new Set(ids.slice(0, ids.length / 2));
    for (const s of readdirSync(dir).filter((n) => SHARD.test(n))) {
      for (const entry of readdirSync(join(dir, s))) if (half.has(entry.slice(0, entry.indexOf(".")))) renameSync(join(dir, s, entry), join(dir, entry));
    }
    assert.ok(flatLeft(dir).length >= half.size, "some actors are flat");
    await h.start();
    await assertIntact(h.url, dir, ids);
    await waitFor("the background migration to finish", () => flatLeft(dir).length === 0, 10_000);
  } finally {
    await h.dispose();
  }
});

test("a kill -9 during the background migration loses nothing and the next start finishes it", async () => {
  const h = await actorHome({ "item.js": MODULES });
  try {
    const ids = await populate(h, 600);
    const dir = flatten(h.home);
    const actorEntries = () => flatLeft(dir).filter((n) => !/^(index\.|files\.journal\.)/.test(n)).length;
    const before = actorEntries();
    await h.start();
    // The move starts a second after the start, a batch of actors per turn.
    await waitFor("the migration to start", () => actorEntries() < before, 10_000);
    h.kill();
    await h.start();
    await assertIntact(h.url, dir, ids);
    await waitFor("the background migration to finish", () => flatLeft(dir).length === 0, 10_000);
  } finally {
    await h.dispose();
  }
});

test.run();
