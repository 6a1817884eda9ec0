// `agent kanban watch` and the daemon's life: an open watch never holds a stop back.
import { spawn } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { waitFor } from "./board-helpers.js";

test("a daemon stop with a watch open ends the watch at once and stops promptly", async () => {
  const { home, cleanup } = tempHome();
  const env = { ...process.env, AGENT_HOME: home, HOME: home, AGENT_PROFILE: "", AGENT_GATEWAY_PORT: "0" };
  try {
    assert.is((await runCli(["daemon", "start"], { home, env })).code, 0);
    const watch = spawn(process.execPath, [CLI, "kanban", "watch"], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    watch.stdout.on("data", (d) => (out += d));
    watch.stderr.on("data", (d) => (out += d));
    const exited = new Promise<number | null>((resolve) => watch.once("exit", (code) => resolve(code)));
    // The watch is open once it shows an event made after it started.
    await waitFor(
      () => `the watch to show a created task: ${out}`,
      async () => {
        const r = await runCli(["kanban", "create", "Seen", "--json"], { home, env });
        return out.includes(JSON.parse(r.stdout).task.id);
      },
      15_000,
    );
    const t0 = Date.now();
    const stopped = await runCli(["daemon", "stop"], { home, env });
    assert.is(stopped.code, 0, stopped.stderr);
    assert.ok(Date.now() - t0 < 8_000, `the stop took ${Date.now() - t0} ms`);
    assert.is(await exited, 0, out);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();
