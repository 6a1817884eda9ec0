// The socket's cap keeps room for the CLI and the TUI: with socket.max_connections 100 and 600
// initialized, idle client connections held open, a TUI-like connection (subscribed to events)
// survives, a new CLI command is answered, and a call in flight on a flooded connection is not
// cut.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { killQuietly, launchDaemon, rpcConnect, runCli, tempHome } from "../helpers/cli.js";

test("a subscribed connection and a call in flight survive a flood of idle clients; the CLI is answered", async () => {
  const { home, cleanup } = tempHome("rsv");
  const env = { AGENT_GATEWAY_PORT: "0" };
  writeFileSync(join(home, "config.yaml"), "socket:\n  max_connections: 100\n");
  let pid = 0;
  const held: Array<Awaited<ReturnType<typeof rpcConnect>>> = [];
  try {
    ({ pid } = await launchDaemon(home, env));
    const tui = await rpcConnect(home);
    await tui.rpc.sendRequest("events.subscribe", { topics: ["kanban.event"] });
    const busy = await rpcConnect(home);
    const slow = busy.rpc.sendRequest("ping", { delayMs: 3000 });
    let closedEarly = 0;
    for (let i = 0; i < 600; i += 50) {
      const batch = await Promise.all(Array.from({ length: 50 }, () => rpcConnect(home).catch(() => null)));
      for (const c of batch) if (c) held.push(c);
    }
    for (const c of held) if (c.socket.destroyed) closedEarly++;
    // The cap dropped the oldest idle clients (hundreds of them), not the TUI or the busy one.
    assert.ok(closedEarly >= 400, `${closedEarly} of ${held.length} flooding connections were dropped`);
    assert.not.ok(tui.socket.destroyed, "the subscribed connection was dropped");
    const pong = (await tui.rpc.sendRequest("ping", {})) as { pong: boolean };
    assert.is(pong.pong, true);
    const status = await runCli(["daemon", "status", "--json"], { home, env });
    assert.is(status.code, 0, status.stderr);
    assert.equal(((await slow) as { pong: boolean }).pong, true);
    tui.close();
    busy.close();
  } finally {
    for (const c of held) c.close();
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(pid);
    cleanup();
  }
});

test.run();
