// `agent backup` while actors are written: the archive is one instant of the home, as a kill -9
// would leave it, so it restores to a home where every file parses and every write acknowledged
// before the backup started is there.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { launchDaemon, runCli, tempHome } from "../helpers/cli.js";
import { actorHome, waitFor } from "./daemon-helpers.js";

const MODULES = `
export const tally = {
  state: { n: 0 },
  options: { sleepTimeout: 300 },
  actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n },
};
`;
/** Enough that most of the 256 shard folders change while the backup stages them (issue 31). */
const ACTORS = 300;

async function call(base: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(new URL(path, base), {
    method,
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}
const inc = (base: string, id: string) => call(base, "POST", `/gateway/${id}/action/inc`, { args: [] }).then((r) => r.output as number);

/** Every file under `dir`, recursively. */
function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : [join(dir, d.name)]));
}

test("a backup taken during concurrent actor writes restores to a home where every file parses and every write acknowledged before it is there", async () => {
  const h = await actorHome({ "tally.js": MODULES });
  const target = tempHome("rb");
  let writing = true;
  try {
    const ids: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async (_, w) => {
        for (let i = w; i < ACTORS; i += 8) {
          const r = await call(h.url, "PUT", "/actors", { name: "tally", key: `t${i}`, runner_name_selector: "default", crash_policy: "sleep" });
          ids.push(r.actor.actor_id);
        }
      }),
    );
    const shards = new Set(readdirSync(join(h.home, "data", "actors")).filter((n) => /^[0-9a-f]{2}$/.test(n)));
    assert.ok(shards.size > 128, `actors in ${shards.size} shard folders`);
    // Acknowledged counts per actor; 8 writers over all actors, which also fall asleep now and then.
    const acked = new Map<string, number>();
    let calls = 0;
    const writers = Array.from({ length: 8 }, async (_, w) => {
      for (let k = w; writing; k += 8) {
        const id = ids[k % ids.length]!;
        const n = await inc(h.url, id);
        acked.set(id, Math.max(acked.get(id) ?? 0, n));
        calls++;
      }
    });
    await waitFor("writes before the backup", () => calls >= 300, 30_000);
    const before = new Map(acked);
    const backup = await h.json<{ path: string }>(["backup"]);
    const during = calls;
    writing = false;
    await Promise.all(writers);
    assert.ok(calls > 300, `writes went on: ${during} then ${calls}`);

    const restored = await runCli(["import", backup.path, "-y", "--json"], { home: target.home });
    assert.is(restored.code, 0, restored.stderr);
    // Every actor file, backup copy, trace file and KV bucket parses.
    const actorFiles = files(join(target.home, "data", "actors")).filter((f) => /\.(json|json\.bak|traces)$/.test(f) && statSync(f).size > 0);
    assert.ok(actorFiles.length > 0);
    for (const f of actorFiles) assert.not.throws(() => JSON.parse(readFileSync(f, "utf8")), f);

    const { url } = await launchDaemon(target.home);
    for (const id of ids) {
      const r = await call(url, "POST", `/gateway/${id}/action/get`, { args: [] });
      assert.ok(r.output >= (before.get(id) ?? 0), `${id}: ${r.output} < ${before.get(id)} acknowledged before the backup`);
    }
  } finally {
    writing = false;
    await runCli(["daemon", "stop"], { home: target.home }).catch(() => undefined);
    target.cleanup();
    await h.dispose();
  }
});

test.run();
