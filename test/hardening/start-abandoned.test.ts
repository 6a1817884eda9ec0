// The CLI waits a bounded time for the daemon's ready report; when it gives up, it closes the
// IPC channel. The daemon, ready later, must go on running rather than die on the closed channel.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { logFile } from "../../shared/paths.js";
import { DAEMON, runCli, tempHome, waitFor } from "../helpers/cli.js";

test("a daemon whose starter closed the channel before the ready report keeps running and stops cleanly", async () => {
  const { home, cleanup } = tempHome("abandon");
  const child = spawn(process.execPath, [DAEMON], {
    env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" },
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  try {
    // The starter gives up at once, as the CLI does after its start timeout.
    child.disconnect();
    const log = logFile(home, "daemon");
    await waitFor("the daemon is ready", () => existsSync(log) && readFileSync(log, "utf8").includes('"daemon ready"'), 20_000);
    const status = await runCli(["daemon", "status", "--json"], { home });
    assert.is(status.code, 0, status.stderr);
    assert.is(child.exitCode, null, `the daemon exited: ${stderr}`);
    assert.is((JSON.parse(status.stdout) as { pid: number }).pid, child.pid);
    const stop = await runCli(["daemon", "stop"], { home });
    assert.is(stop.code, 0, stop.stderr);
    assert.is(await exited, 0, stderr);
    assert.not.match(stderr, /ERR_IPC_CHANNEL_CLOSED/);
  } finally {
    if (child.exitCode === null) child.kill("SIGKILL");
    cleanup();
  }
});

test.run();
