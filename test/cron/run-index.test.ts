// A cron job's run index on the chunked KV (daemon/store/chunked-kv.ts), driven through the cron
// actor's own actions over the real bucketed KV files in a temp folder: homes written by the
// earlier versions (the index as one `idx/<job>` record, or no index at all) load unchanged,
// move into the chunked list at open, and keep their cap.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BucketedKv } from "../../daemon/actors/storage/kv.js";
import type { ActorContext } from "../../daemon/actors/types.js";
import { type CronState, cronDefinition } from "../../daemon/cron/cron-actor.js";
import type { CronRun } from "../../shared/protocol/cron.js";

const dirs: string[] = [];
test.after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const JOB = "c_0000beef";
const run = (i: number): CronRun => ({
  runId: `r_${i}`,
  jobId: JOB,
  trigger: "manual",
  scheduledAt: 1_000 + i,
  startedAt: 1_000 + i,
  finishedAt: 1_001 + i,
  status: "ok",
  error: null,
  output: `run ${i}`,
  sessionId: `s_${i}`,
  skipped: 0,
  delivery: { status: "none", detail: null },
});
const keyOf = (r: CronRun) => `run/${r.jobId}/${String(r.startedAt).padStart(15, "0")}-${r.runId}`;

/** The cron actor's context over a fresh KV folder (only what its run actions use). */
function context(): { c: ActorContext<CronState>; kv: BucketedKv } {
  const dir = mkdtempSync(join(tmpdir(), "cron-index-"));
  dirs.push(dir);
  const kv = new BucketedKv(dir);
  return { c: { kv, actorId: "cron-test", state: { profile: "default", jobs: {} } } as unknown as ActorContext<CronState>, kv };
}

const actions = (keep: number) => cronDefinition(keep).actions as Record<string, (...a: any[]) => Promise<any>>;

test("a home with the index as one record (idx/<job>) reads its runs, moves the index into chunks and keeps the cap", async () => {
  const { c, kv } = context();
  const old = [0, 1, 2, 3, 4].map(run);
  for (const r of old) await kv.putJson(keyOf(r), r);
  await kv.putJson(
    `idx/${JOB}`,
    old.map((r) => [keyOf(r), r.sessionId]),
  );
  const a = actions(5);
  const newest = (await a.runs!(c, JOB, 3)) as CronRun[];
  assert.equal(
    newest.map((r) => r.runId),
    ["r_4", "r_3", "r_2"],
  );
  assert.is(await kv.getJson(`idx/${JOB}`), null, "the old record is gone");
  assert.is(((await kv.getJson(`idx/${JOB}/00000000`)) as unknown[]).length, 5, "the entries are in the first chunk");
  // The cap counts the runs recorded before: two more runs drop the two oldest, with their sessions.
  const pruned: string[] = [];
  for (const i of [5, 6]) pruned.push(...((await a.finish!(c, run(i))) as { pruned: string[] }).pruned);
  assert.equal(pruned, ["s_0", "s_1"]);
  assert.is(await kv.getJson(keyOf(run(0))), null, "a dropped run's record is deleted");
  assert.equal(
    ((await a.runs!(c, JOB, 100)) as CronRun[]).map((r) => r.runId),
    ["r_6", "r_5", "r_4", "r_3", "r_2"],
  );
});

test("a home older still (runs and no index) gets its index built from the runs, and removing the job leaves no key", async () => {
  const { c, kv } = context();
  for (const r of [0, 1, 2].map(run)) await kv.putJson(keyOf(r), r);
  const a = actions(200);
  assert.equal(
    ((await a.runs!(c, JOB, 10)) as CronRun[]).map((r) => r.runId),
    ["r_2", "r_1", "r_0"],
  );
  await a.finish!(c, run(3));
  c.state.jobs[JOB] = { id: JOB } as CronState["jobs"][string];
  const sessions = (await a.remove!(c, JOB)) as string[];
  assert.equal(sessions.sort(), ["s_0", "s_1", "s_2", "s_3"]);
  assert.equal(await kv.list(""), []);
});

test("past a chunk of the index, a run costs the same: the index's last chunk is written, not the whole history", async () => {
  const { c, kv } = context();
  const a = actions(200);
  for (let i = 0; i < 150; i++) await a.finish!(c, run(i));
  const before = await kv.getJson<unknown[]>(`idx/${JOB}/00000000`);
  assert.is(before!.length, 64);
  assert.is((await kv.getJson<unknown[]>(`idx/${JOB}/00000002`))!.length, 150 - 128);
  // The cap of 200 holds across many runs; the chunks wholly dropped are deleted.
  for (let i = 150; i < 330; i++) await a.finish!(c, run(i));
  const all = (await a.runs!(c, JOB, 1000)) as CronRun[];
  assert.is(all.length, 200);
  assert.is(all[0]!.runId, "r_329");
  assert.is(all[199]!.runId, "r_130");
  assert.is(await kv.getJson(`idx/${JOB}/00000000`), null);
  assert.is(await kv.getJson(`idx/${JOB}/00000001`), null);
  assert.is((await kv.list(`run/${JOB}/`)).length, 200, "exactly the kept runs remain");
});

test("a run recorded twice (interrupted, then finished) stays one entry, updated in place", async () => {
  const { c } = context();
  const a = actions(200);
  await a.finish!(c, run(0));
  await a.finish!(c, { ...run(1), status: "interrupted", sessionId: null });
  await a.finish!(c, { ...run(1), status: "ok" });
  const runs = (await a.runs!(c, JOB, 10)) as CronRun[];
  assert.equal(
    runs.map((r) => [r.runId, r.status]),
    [
      ["r_1", "ok"],
      ["r_0", "ok"],
    ],
  );
  c.state.jobs[JOB] = { id: JOB } as CronState["jobs"][string];
  assert.equal(((await a.remove!(c, JOB)) as string[]).sort(), ["s_0", "s_1"], "the entry carries the session of the last record");
});

test.run();
