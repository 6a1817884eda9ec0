// `agent kanban log --follow` and `agent kanban watch` as a user sees them, with real workers
// (the dispatcher's `agent chat` processes against the fake model server).
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI } from "../helpers/cli.js";
import { completes, hangs, type KanbanHome, kanbanHome, rateLimited, waitFor } from "./dispatch-helpers.js";

let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
});

test.after(async () => {
  await h.dispose();
});

/** `agent kanban <args>` as a child whose output is read while it runs. */
function spawnCli(args: string[]) {
  const child = spawn(process.execPath, [CLI, "kanban", ...args], {
    env: { ...process.env, AGENT_HOME: h.home, AGENT_GATEWAY_PORT: "0", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  return {
    child,
    exited,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
  };
}

test("log --follow on a finished task prints its log and exits", async () => {
  const created = await h.task("finish me", [completes("finished")]);
  const t = await h.waitTask("done with its run ended", created.id, (x) => x.status === "done" && x.runs.every((r) => r.ended_at !== null));
  const started = Date.now();
  const r = await h.cli(["kanban", "log", created.id, "--follow"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, new RegExp(`=== .* run ${t.runs[0]!.run_id} of ${created.id}`));
  // It does not wait for output that cannot come.
  assert.ok(Date.now() - started < 5_000, `took ${Date.now() - started} ms`);
});

test("log --follow on a running task starts at the current run's header, not the earlier run's, and ends when the run does", async () => {
  const created = await h.task("follow me", [rateLimited, hangs]);
  const running = await h.waitTask("running its second run", created.id, (x) => x.status === "running" && x.runs.length === 2 && x.runs[1]!.pid != null);
  const [first, second] = running.runs;
  const follow = spawnCli(["log", created.id, "--follow"]);
  try {
    await waitFor(
      () => `the follow to print the run's header: ${follow.out}${follow.err}`,
      () => follow.out.includes(`run ${second!.run_id} of ${created.id}`),
    );
    assert.ok(follow.out.startsWith("=== "), follow.out);
    assert.not.ok(follow.out.includes(first!.run_id), follow.out);
    const blocked = await h.cli(["kanban", "block", created.id, "enough"]);
    assert.is(blocked.code, 0, blocked.stderr);
    // The task is no longer running: the follow ends by itself.
    let code: number | null | undefined;
    void follow.exited.then((c) => (code = c));
    await waitFor(
      () => `the follow to end: ${follow.out}${follow.err}`,
      () => code !== undefined,
    );
    assert.is(code, 0, follow.err);
  } finally {
    follow.child.kill("SIGKILL");
  }
});

test("watch shows each status change as from → to and leaves out changes that changed nothing", async () => {
  const watch = spawnCli(["watch"]);
  try {
    await waitFor(
      () => `the watch to show a created task: ${watch.out}${watch.err}`,
      async () => (await h.call("kanban.create", { title: "probe", triage: true }), watch.out.includes(" created ")),
    );
    const parent = (await h.call("kanban.create", { title: "parent", triage: true })).task;
    const child = (await h.call("kanban.create", { title: "child", triage: true, parents: [parent.id] })).task;
    await h.call("kanban.promote", { ids: [child.id] });
    // Completing the parent wakes the child: todo → ready.
    await h.call("kanban.complete", { ids: [parent.id], summary: "done" });
    // Scheduling a scheduled task again changes nothing.
    await h.call("kanban.schedule", { ids: [child.id] });
    await h.call("kanban.schedule", { ids: [child.id] });
    await h.call("kanban.comment", { id: child.id, body: "the last event" });
    await waitFor(
      () => `the watch to show the comment: ${watch.out}`,
      () => watch.out.includes(`${child.id}  commented`),
    );
    const lines = watch.out.split("\n").filter((l) => l.includes(child.id));
    assert.ok(
      lines.some((l) => / ready {2}todo → ready /.test(l)),
      lines.join("\n"),
    );
    assert.ok(
      lines.some((l) => / scheduled {2}ready → scheduled /.test(l)),
      lines.join("\n"),
    );
    for (const l of lines) assert.not.match(l, /\b(\w+) → \1\b/, `a no-op transition was printed: ${l}`);
    assert.is(lines.filter((l) => / scheduled {2}/.test(l)).length, 1, lines.join("\n"));
  } finally {
    watch.child.kill("SIGINT");
  }
});

test.run();
