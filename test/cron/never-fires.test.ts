import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { cronHome } from "./helpers.js";

// Issue 23, part 4b: a cron expression that can never fire (31 February) is refused.

const h = await cronHome({ respond: () => ({ text: "pong" }) });
test.after(() => h.dispose());

test("cron add refuses 0 0 31 2 * with a clear error and creates nothing", async () => {
  const before = (await h.cron(["list"])).jobs.length;
  for (const expr of ["0 0 31 2 *", "0 0 30 2 *", "0 0 31 4 *"]) {
    const r = await h.cli(["cron", "add", expr, "say hi"]);
    assert.is(r.code, 1, `${expr}: ${r.stderr}`);
    assert.match(r.stderr, new RegExp(`"${expr.replace(/\*/g, "\\*")}" never fires: it has no fire time in the next 10 years`));
  }
  assert.is((await h.cron(["list"])).jobs.length, before);
  // A rare but real date is fine: 29 February.
  const leap = await h.add(["0 0 29 2 *", "leap day"]);
  assert.is(leap.enabled, true);
  assert.ok(leap.nextRunAt);
  await h.cron(["remove", leap.id]);
});

test("cron edit refuses it and leaves the job as it was", async () => {
  const job = await h.add(["0 9 * * *", "morning"]);
  const r = await h.cli(["cron", "edit", job.id, "--schedule", "0 0 31 2 *"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /never fires/);
  const still = await h.job(job.id);
  assert.is(still.schedule, "0 9 * * *");
  assert.is(still.nextRunAt, job.nextRunAt);
  await h.cron(["remove", job.id]);
});

test("a job in a cron file with such a schedule is not loaded", async () => {
  mkdirSync(join(h.home, "cron"), { recursive: true });
  writeFileSync(
    join(h.home, "cron", "mine.yaml"),
    "jobs:\n  - name: never\n    schedule: '0 0 31 2 *'\n    prompt: hi\n    enabled: true\n  - name: daily\n    schedule: '0 9 * * *'\n    prompt: hi\n",
  );
  const names = (await h.cron(["list"])).jobs.map((j: { name: string }) => j.name);
  assert.ok(names.includes("daily"), names.join(", "));
  assert.not.ok(names.includes("never"), names.join(", "));
});

test.run();
