// A board survives `kill -9` at any moment: every task whose creation was acknowledged is there
// after the restart, and a change of several tasks is never found half done.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { runCli, spawnDaemon, stopDaemon, tempHome } from "../helpers/cli.js";
import { waitFor } from "./board-helpers.js";

test("a daemon killed with kill -9 during a burst of creates loses no acknowledged task", async () => {
  const { home, cleanup } = tempHome();
  const env = { HOME: home, AGENT_PROFILE: "" };
  try {
    const daemon = await spawnDaemon(home, env);
    const client = await connectDaemon({ home });
    const acked: string[] = [];
    let failed = 0;
    // Keep 32 creations in flight until the daemon is gone.
    const worker = async (w: number) => {
      for (let i = 0; ; i++) {
        try {
          const r = await client.call("kanban.create", { title: `burst ${w}.${i}` });
          acked.push(r.task.id);
        } catch {
          failed++;
          return;
        }
      }
    };
    const workers = Array.from({ length: 32 }, (_, w) => worker(w));
    await waitFor("300 acknowledged creates", () => acked.length >= 300, 60_000);
    daemon.kill();
    await daemon.exited;
    await Promise.all(workers);
    client.close();
    const snapshot = [...acked];
    const listed = await runCli(["kanban", "list", "--json"], { home, env });
    assert.is(listed.code, 0, listed.stderr);
    const ids = new Set((JSON.parse(listed.stdout).tasks as Array<{ id: string }>).map((t) => t.id));
    const lost = snapshot.filter((id) => !ids.has(id));
    assert.equal(lost, [], `${lost.length} of ${snapshot.length} acknowledged tasks lost`);
    assert.ok(failed > 0, "the burst was cut by the kill");
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("a board's links and statuses are the same after a kill -9 and a restart", async () => {
  const { home, cleanup } = tempHome();
  const env = { HOME: home, AGENT_PROFILE: "" };
  try {
    const daemon = await spawnDaemon(home, env);
    const client = await connectDaemon({ home });
    const a = (await client.call("kanban.create", { title: "A" })).task.id;
    const b = (await client.call("kanban.create", { title: "B", parents: [a] })).task.id;
    await client.call("kanban.complete", { ids: [a], summary: "done" });
    client.close();
    daemon.kill();
    await daemon.exited;
    const shown = await runCli(["kanban", "show", b, "--json"], { home, env });
    assert.is(shown.code, 0, shown.stderr);
    const task = JSON.parse(shown.stdout).task;
    assert.equal([task.status, task.parents], ["ready", [a]]);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();
