import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { keepAliveJson } from "../helpers/http-json.js";
import { actorHome, waitFor } from "./daemon-helpers.js";

const MODULES = `
export const item = {
  state: { n: 0 },
  options: { sleepTimeout: 60000 },
  actions: {
    inc: (c) => ++c.state.n,
    get: (c) => c.state.n,
    napAt: (c, ts) => void setTimeout(() => c.sleep(), Math.max(0, ts - Date.now())),
  },
};
`;

/** One HTTP call to the gateway: status and parsed body. */
const call = keepAliveJson(32);

const create = (base: string, key: string) => call(base, "PUT", "/actors", { name: "item", key, runner_name_selector: "default", crash_policy: "sleep" });

/** Run `fn(i)` for i in [0, n) with `concurrency` workers until `stop()` says so. */
async function pool(n: number, concurrency: number, fn: (i: number) => Promise<void>, stop = () => false): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < n && !stop()) await fn(next++);
    }),
  );
}

/** Every live `item` actor, page by page. */
async function listAll(base: string, limit: number): Promise<any[]> {
  const out: any[] = [];
  let cursor: string | null = null;
  for (;;) {
    const r: { status: number; json: any } = await call(base, "GET", `/actors?name=item&limit=${limit}${cursor ? `&cursor=${cursor}` : ""}`);
    assert.is(r.status, 200, JSON.stringify(r.json));
    assert.ok(r.json.actors.length <= limit);
    out.push(...r.json.actors);
    cursor = r.json.pagination.cursor;
    if (cursor === null) return out;
  }
}

/** Every file the daemon keeps for actors (in every folder) parses: JSON files whole, journals line by line (a torn last line is allowed only while it is the last). */
function assertFilesParse(dir: string): void {
  for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const name = entry.name;
    const file = join(entry.parentPath ?? entry.path, name);
    if (name.endsWith(".tmp")) continue; // never read: a write a kill -9 interrupted
    if (name.endsWith(".json") || name.endsWith(".traces")) {
      assert.not.throws(() => JSON.parse(readFileSync(file, "utf8")), `${name} does not parse`);
    } else if (name.startsWith("index.journal.") || name.startsWith("files.journal.")) {
      const lines = readFileSync(file, "utf8").split("\n");
      lines.pop(); // after the last newline: empty, or a torn line never acknowledged
      for (const line of lines) {
        const json = name.startsWith("files.") ? line.slice(line.indexOf("\t") + 1) : line;
        if (json !== "") assert.not.throws(() => JSON.parse(json), `a line of ${name} does not parse`);
      }
    }
  }
}

test("listing by name pages newest first through every live actor, and a key lookup finds one", async () => {
  const h = await actorHome({ "item.js": MODULES });
  try {
    const ids: string[] = [];
    await pool(120, 8, async (i) => {
      const r = await create(h.url, `p${i}`);
      assert.is(r.status, 200);
      ids[i] = r.json.actor.actor_id;
    });
    for (const id of ids.slice(0, 10)) assert.is((await call(h.url, "DELETE", `/actors/${id}`)).status, 200);
    const listed = await listAll(h.url, 25);
    assert.is(listed.length, 110);
    assert.equal(new Set(listed.map((a) => a.actor_id)), new Set(ids.slice(10)));
    for (let i = 1; i < listed.length; i++) assert.ok(listed[i - 1].create_ts >= listed[i].create_ts, "newest first");
    // Unpaged, the response keeps its shape.
    const all = await call(h.url, "GET", "/actors?name=item");
    assert.equal(Object.keys(all.json), ["actors"]);
    assert.is(all.json.actors.length, 110);
    const byKey = await call(h.url, "GET", "/actors?name=item&key=p57");
    assert.equal(
      byKey.json.actors.map((a: any) => a.actor_id),
      [ids[57]],
    );
    assert.equal((await call(h.url, "GET", "/actors?name=item&key=p3")).json.actors, []);
    assert.is((await call(h.url, "GET", "/actors?name=item&limit=0")).status, 400);
    assert.is((await call(h.url, "GET", "/actors?name=item&limit=x")).status, 400);
    assert.is((await call(h.url, "GET", "/actors?name=item&limit=5&cursor=..")).status, 400);
  } finally {
    await h.dispose();
  }
});

test("a kill -9 during a creation burst loses no acknowledged actor, every file parses, and the restart is fast", async () => {
  const h = await actorHome({ "item.js": MODULES });
  try {
    const acked: string[] = [];
    let killed = false;
    const killAt = 300 + Math.floor(Math.random() * 900);
    await pool(
      3000,
      16,
      async (i) => {
        const r = await create(h.url, `c${i}`).catch(() => null);
        if (r?.status === 200) acked.push(r.json.actor.actor_id);
        if (!killed && acked.length >= killAt) {
          killed = true;
          h.kill();
        }
      },
      () => killed,
    );
    assert.ok(acked.length >= killAt);
    const dir = join(h.home, "data", "actors");
    assertFilesParse(dir);
    const t0 = Date.now();
    await h.start();
    const restartMs = Date.now() - t0;
    assert.ok(restartMs < 10_000, `the restart took ${restartMs} ms`);
    const listed = new Set((await listAll(h.url, 1000)).map((a) => a.actor_id));
    const lost = acked.filter((id) => !listed.has(id));
    assert.equal(lost, [], `${lost.length} acknowledged actors lost`);
    // Their actor files open: each answers.
    for (const id of acked.slice(-20)) assert.is((await call(h.url, "POST", `/gateway/${id}/action/get`, { args: [] })).json.output, 0);
    assertFilesParse(dir);
  } finally {
    await h.dispose();
  }
});

test("a kill -9 during a sleep storm loses no acknowledged state, every file parses, and the restart is fast", async () => {
  const h = await actorHome({ "item.js": MODULES });
  try {
    const ids: string[] = [];
    await pool(1000, 16, async (i) => {
      const r = await create(h.url, `s${i}`);
      ids[i] = r.json.actor.actor_id;
    });
    // Every actor acknowledges a state change, then all fall asleep at the same moment.
    await pool(ids.length, 32, async (i) => void assert.is((await call(h.url, "POST", `/gateway/${ids[i]}/action/inc`, { args: [] })).json.output, 1));
    const stormAt = Date.now() + 300;
    await pool(ids.length, 32, async (i) => void (await call(h.url, "POST", `/gateway/${ids[i]}/action/napAt`, { args: [stormAt] })));
    const delay = stormAt - Date.now() + Math.floor(Math.random() * 400);
    await new Promise((r) => setTimeout(r, Math.max(0, delay)));
    h.kill();
    const dir = join(h.home, "data", "actors");
    assertFilesParse(dir);
    const t0 = Date.now();
    await h.start();
    const restartMs = Date.now() - t0;
    assert.ok(restartMs < 10_000, `the restart took ${restartMs} ms`);
    const states: number[] = [];
    await pool(ids.length, 32, async (i) => void (states[i] = (await call(h.url, "POST", `/gateway/${ids[i]}/action/get`, { args: [] })).json.output));
    assert.equal(
      states.filter((n) => n !== 1),
      [],
    );
    await waitFor("every actor listed", async () => (await listAll(h.url, 1000)).length === ids.length, 8000);
    assertFilesParse(dir);
  } finally {
    await h.dispose();
  }
});

test("every sleep of a storm that ended is on disk: after a kill -9 none of its actors is awake again", async () => {
  const h = await actorHome({ "item.js": MODULES });
  try {
    const ids: string[] = [];
    await pool(600, 16, async (i) => {
      const r = await create(h.url, `z${i}`);
      ids[i] = r.json.actor.actor_id;
    });
    const stormAt = Date.now() + 300;
    await pool(ids.length, 32, async (i) => void (await call(h.url, "POST", `/gateway/${ids[i]}/action/napAt`, { args: [stormAt] })));
    await waitFor("every actor asleep", async () => (await listAll(h.url, 1000)).every((a) => a.sleep_ts !== null), 20_000);
    // One more round trip: the index line of the last sleep is appended in the turn after it.
    await call(h.url, "GET", "/health");
    h.kill();
    await h.start();
    const listed = await listAll(h.url, 1000);
    assert.is(listed.length, ids.length);
    assert.equal(
      listed.filter((a) => a.sleep_ts === null).map((a) => a.actor_id),
      [],
    );
    assertFilesParse(join(h.home, "data", "actors"));
  } finally {
    await h.dispose();
  }
});

test.after(() => call.close());

test.run();
