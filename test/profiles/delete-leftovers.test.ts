// What lives outside a profile's folder when it is deleted: cron jobs added to it refuse the
// deletion (named in the error) unless --force, which removes them with their runs; its
// sessions stay, with their history, under the deleted profile's name.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { rpcConnect } from "../helpers/cli.js";
import { hasStack, profileHome } from "./helpers.js";

const h = profileHome();
test.after(() => h.dispose());

async function ok(args: string[]): Promise<any> {
  const r = await h.cli([...args, "--json"]);
  assert.is(r.code, 0, `agent ${args.join(" ")}: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

test("a profile with cron jobs is not deleted without --force; the error names the jobs and nothing changes", async () => {
  await ok(["profile", "create", "nightly", "--no-alias"]);
  const { job } = await ok(["-p", "nightly", "cron", "add", "every 1d", "--script", "echo hi", "--name", "backup-notes"]);
  const r = await h.cli(["profile", "delete", "nightly", "-y"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, job.id);
  assert.match(r.stderr, "backup-notes");
  assert.match(r.stderr, /--force/);
  assert.not.ok(hasStack(r.stderr));
  assert.ok(existsSync(join(h.home, "profiles", "nightly")));
  assert.equal(
    (await ok(["-p", "nightly", "cron", "list"])).jobs.map((j: { id: string }) => j.id),
    [job.id],
  );
});

test("the daemon refuses the same deletion from any client, without force", async () => {
  const conn = await rpcConnect(h.home);
  try {
    await conn.rpc.sendRequest("profile.delete.apply", { name: "nightly" });
    assert.unreachable("refused");
  } catch (error) {
    const e = error as { data?: { code?: string }; message?: string };
    assert.is(e.data?.code, "profile.in_use", JSON.stringify(e));
  } finally {
    conn.close();
  }
  assert.ok(existsSync(join(h.home, "profiles", "nightly")));
});

test("delete --force removes the profile's cron jobs with their runs; its sessions stay with their history", async () => {
  const { job } = await ok(["-p", "nightly", "cron", "list"]).then((r) => ({ job: r.jobs[0] }));
  const run = await ok(["-p", "nightly", "cron", "run", job.id]);
  assert.is(run.run.status, "ok");
  const client = await connectDaemon({ home: h.home, profile: "nightly" });
  const { session } = await client.call("chat.sessions.create", { title: "notes about the night", profile: "nightly" }).finally(() => client.close());
  const preview = await h.cli(["profile", "delete", "nightly", "--force"]);
  assert.is(preview.code, 1, "no terminal and no -y: asks, so refuses");
  assert.match(preview.stderr, `cron jobs removed with their runs: ${job.id} (backup-notes, every 1d)`);
  assert.match(preview.stderr, /its 1 session\(s\) stay/);
  const r = await ok(["profile", "delete", "nightly", "--force", "-y"]);
  assert.equal(r.cron_jobs_removed, [job.id]);
  assert.not.ok(existsSync(join(h.home, "profiles", "nightly")));
  const { sessions } = await ok(["sessions", "list", "--all-profiles"]);
  const kept = sessions.find((s: { id: string }) => s.id === session.id);
  assert.ok(kept, "the session stays");
  assert.is(kept.profile, "nightly");
  assert.is(kept.title, "notes about the night");
  // A new profile of that name starts with no cron jobs (the old table is gone).
  await ok(["profile", "create", "nightly", "--no-alias"]);
  assert.equal((await ok(["-p", "nightly", "cron", "list"])).jobs, []);
});

test("a profile without cron jobs is deleted as before and says so in --json", async () => {
  await ok(["profile", "create", "plain", "--no-alias"]);
  const r = await ok(["profile", "delete", "plain", "-y"]);
  assert.is(r.deleted, "plain");
  assert.equal(r.cron_jobs_removed, []);
});

test.run();
