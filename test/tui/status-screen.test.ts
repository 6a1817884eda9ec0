import { execFileSync } from "node:child_process";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, runCli, tempHome, waitFor } from "../helpers/cli.js";

const tmux = (...args: string[]) => execFileSync("tmux", args, { encoding: "utf8" });

async function waitForScreen(session: string, pattern: RegExp, timeoutMs = 15_000): Promise<string> {
  let screen = "";
  return waitFor(
    () => `the screen to match ${pattern}:\n${screen}`,
    () => {
      screen = tmux("capture-pane", "-p", "-t", session);
      return pattern.test(screen) && screen;
    },
    timeoutMs,
  );
}

test("agent --tui starts the daemon and shows its status until Ctrl-C is pressed twice", async () => {
  const { home, cleanup } = tempHome();
  const session = `agent-tui-${process.pid}`;
  try {
    tmux("new-session", "-d", "-s", session, "-x", "120", "-y", "30", `AGENT_HOME=${home} AGENT_GATEWAY_PORT=0 ${process.execPath} ${CLI} --tui; sleep 30`);
    const screen = await waitForScreen(session, /agentd.*running\s+pid \d+/);
    assert.match(screen, /┌─ agent ─+┐/, "borders are Unicode box glyphs");
    assert.not.match(screen, /lq agent qq/, "not the ACS letters");
    assert.match(screen, new RegExp(`home\\s+${home.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
    const status = JSON.parse((await runCli(["daemon", "status", "--json"], { home })).stdout);
    assert.match(screen, new RegExp(`pid ${status.pid}`));
    tmux("send-keys", "-t", session, "C-c");
    tmux("send-keys", "-t", session, "C-c");
    await waitForScreen(session, /^(?![\s\S]*agentd.*running)/);
  } finally {
    try {
      tmux("kill-session", "-t", session);
    } catch {}
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test.run();
