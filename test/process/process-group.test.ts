// The one process module (daemon/process/): a spawned group is recorded and forgotten, stopped
// by the one grace rule (SIGTERM, then SIGKILL to what ignored it), and reaped at start only when
// its owner is gone and its leader's pid still has the recorded start time.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type GroupRecord, useCommandJournal } from "../../daemon/process/command-journal.js";
import { groupIsOurs, reapOrphanGroups, spawnGroup } from "../../daemon/process/process-group.js";
import { hasProc, isAlive, processGroupMembers, processStartTime } from "../../shared/process.js";
import { waitFor } from "../helpers/wait.js";

const dir = mkdtempSync(join(tmpdir(), "agent-process-"));
const journal = join(dir, "running-commands");
useCommandJournal(journal);
const leftover: number[] = [];
test.after(() => {
  useCommandJournal(null);
  for (const pgid of leftover) {
    try {
      process.kill(-pgid, "SIGKILL");
    } catch {}
  }
  rmSync(dir, { recursive: true, force: true });
});

const records = () => (existsSync(journal) ? readdirSync(journal).filter((f) => f.endsWith(".json")) : []);
const exited = (child: ReturnType<typeof spawnGroup>["child"]) =>
  new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));

/** A pid that was a process of ours and is gone now. */
async function deadPid(): Promise<number> {
  const child = spawn("/bin/sh", ["-c", "exit 0"], { stdio: "ignore" });
  await new Promise((r) => child.once("exit", r));
  return child.pid!;
}

const run = hasProc() ? test : test.skip;

run("a spawned group leads its own process group, is recorded with its start time, and forget() drops the record", async () => {
  const { child, group } = spawnGroup("/bin/sh", ["-c", "sleep 0.3 & echo hi; wait"], { label: "the label" });
  assert.ok(group);
  leftover.push(group.pgid);
  assert.is(group.pgid, child.pid);
  assert.is(group.startTime, processStartTime(child.pid!));
  const [file] = records();
  const record = JSON.parse(readFileSync(join(journal, file!), "utf8")) as GroupRecord;
  assert.equal([record.pgid, record.startTime, record.owner, record.command], [child.pid, group.startTime, process.pid, "the label"]);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  assert.equal(await exited(child), { code: 0, signal: null });
  assert.is(out, "hi\n");
  group.forget();
  assert.equal(records(), []);
});

run("stop(): SIGTERM to the whole group, SIGKILL after the grace period to what ignored it", async () => {
  // The shell ignores SIGTERM; its child, started before the trap, sleeps in the same group and does not.
  const { child, group } = spawnGroup("/bin/sh", ["-c", "sleep 30 & echo $!; trap '' TERM; echo $$; wait; sleep 30"], { label: "stubborn" });
  leftover.push(group!.pgid);
  let out = "";
  child.stdout!.on("data", (d: Buffer) => (out += d));
  await waitFor("both pids", () => out.trim().split("\n").length === 2);
  const [sleeper, shell] = out.trim().split("\n").map(Number) as [number, number];
  // Listened for before the stop: under load the grace period can be over (and the exit
  // emitted) before the test gets to look.
  const exit = exited(child);
  const started = Date.now();
  group!.stop(400);
  await waitFor("the sleep to die of SIGTERM", () => !isAlive(sleeper), 5_000);
  const end = await exit;
  // The shell ignored SIGTERM: only the SIGKILL after the grace period ended it.
  assert.is(end.signal, "SIGKILL", `the shell (${shell}) ended by ${end.signal ?? `exit ${end.code}`}`);
  assert.ok(Date.now() - started >= 350, `killed after ${Date.now() - started} ms, before the grace period`);
  group!.forget({ killLeftovers: true });
  // A SIGKILLed process takes a moment to be gone from /proc (under load, long enough to be seen).
  await waitFor("the group to be empty", () => processGroupMembers(group!.pgid).length === 0, 5_000);
  assert.equal(records(), []);
});

run("once a stopped group's leader has ended, what it left is killed at once, not after the grace period", async () => {
  // The leader exits on SIGTERM; a member that ignores it is left behind.
  const { child, group } = spawnGroup("/bin/sh", ["-c", "trap 'exit 7' TERM; sh -c \"trap '' TERM; sleep 30\" & wait"], { label: "leaves one" });
  leftover.push(group!.pgid);
  await waitFor("the members to run", () => processGroupMembers(group!.pgid).length >= 3);
  const started = Date.now();
  group!.stop(10_000);
  assert.equal(await exited(child), { code: 7, signal: null });
  assert.ok(processGroupMembers(group!.pgid).length > 0, "a member ignored SIGTERM");
  group!.forget({ killLeftovers: true });
  await waitFor("the leftover to be killed", () => processGroupMembers(group!.pgid).length === 0, 2_000);
  assert.ok(Date.now() - started < 5_000);
  assert.equal(records(), []);
});

run("reap at start: an orphan of a dead owner is stopped; a live owner's group is left; a reused pid is never signalled", async () => {
  const dead = await deadPid();
  const orphan = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  const live = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  const stranger = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  for (const c of [orphan, live, stranger]) leftover.push(c.pid!);
  const write = (pgid: number, startTime: string, owner: number, ownerStartTime: string | null) =>
    writeFileSync(join(journal, `${pgid}.json`), JSON.stringify({ pgid, startTime, owner, ownerStartTime, command: `c${pgid}`, startedAt: 0 }));
  write(orphan.pid!, processStartTime(orphan.pid!)!, dead, "1");
  write(live.pid!, processStartTime(live.pid!)!, process.pid, processStartTime(process.pid));
  // The pid now belongs to another process than the one recorded (another start time).
  write(stranger.pid!, "1", dead, "1");
  assert.is(groupIsOurs({ pgid: stranger.pid!, startTime: "1" }), false);

  const reaped = reapOrphanGroups(journal, 300);
  assert.equal(reaped, [{ pgid: orphan.pid!, command: `c${orphan.pid}` }]);
  await waitFor("the orphan to be gone", () => processGroupMembers(orphan.pid!).length === 0, 3_000);
  await waitFor("its record to go", () => !records().includes(`${orphan.pid}.json`), 3_000);
  assert.ok(isAlive(live.pid!), "a group whose owner runs is left alone");
  assert.ok(records().includes(`${live.pid}.json`));
  assert.ok(isAlive(stranger.pid!), "a reused pid is not killed");
  assert.not.ok(records().includes(`${stranger.pid}.json`), "its stale record is dropped");
  live.kill("SIGKILL");
  stranger.kill("SIGKILL");
});

run("reap at start: an owner killed but not yet reaped by its parent (a zombie) is gone, and its orphan is stopped", async () => {
  // The background child becomes a zombie: it ends after its parent exec'd into a sleep that never waits for it.
  const parent = spawn("/bin/sh", ["-c", "sh -c 'sleep 0.5; exit 0' & echo $!; exec sleep 30"], { detached: true, stdio: ["ignore", "pipe", "ignore"] });
  leftover.push(parent.pid!);
  let out = "";
  parent.stdout!.on("data", (d: Buffer) => (out += d));
  await waitFor("the owner's pid", () => Number(out.trim()) > 0);
  const owner = Number(out.trim());
  await waitFor("the owner to be a zombie", () => !isAlive(owner) && processStartTime(owner) !== null);
  const orphan = spawn("/bin/sh", ["-c", "sleep 30"], { detached: true, stdio: "ignore" });
  leftover.push(orphan.pid!);
  writeFileSync(
    join(journal, `${orphan.pid}.json`),
    JSON.stringify({ pgid: orphan.pid, startTime: processStartTime(orphan.pid!), owner, ownerStartTime: processStartTime(owner), command: "z", startedAt: 0 }),
  );
  assert.equal(reapOrphanGroups(journal, 300), [{ pgid: orphan.pid!, command: "z" }]);
  await waitFor("the orphan to be gone", () => processGroupMembers(orphan.pid!).length === 0, 3_000);
  parent.kill("SIGKILL");
});

test.run();
