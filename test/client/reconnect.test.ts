// The socket client's reconnection (a kanban worker's): after the daemon restarts, a call made
// later connects again; a client without it fails at once; with no daemon coming back, calls
// fail after the window with a clear error.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import { runCli, startedHome } from "../helpers/cli.js";

const h = await startedHome();
const clients: DaemonClient[] = [];
test.after(async () => {
  for (const c of clients) c.close();
  await h.dispose();
});

async function client(options: { reconnectMs?: number; env?: NodeJS.ProcessEnv } = {}): Promise<DaemonClient> {
  const c = await connectDaemon({ home: h.home, ...options });
  clients.push(c);
  return c;
}

async function daemon(...args: string[]): Promise<void> {
  const r = await runCli(["daemon", ...args], { home: h.home });
  assert.is(r.code, 0, r.stderr);
}

async function code(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return "resolved";
  } catch (error) {
    return (error as { code?: string }).code ?? String(error);
  }
}

test("a client with a reconnect window answers through the new daemon after a restart; one without fails", async () => {
  const worker = await client({ env: { ...process.env, AGENT_KANBAN_TASK: "t_00000000" } });
  const plain = await client();
  const before = worker.daemon.pid;
  const closed = worker.closed();
  await daemon("restart");
  await closed;
  assert.is(await code(plain.call("daemon.status", {})), "daemon.disconnected");
  const status = await worker.call("daemon.status", {});
  assert.is.not(status.pid, before);
  assert.is(worker.daemon.pid, status.pid, "the client reports the daemon it is connected to");
});

test("with no daemon coming back, a call fails once the window has passed, with a clear error", async () => {
  const c = await client({ reconnectMs: 800 });
  const closed = c.closed();
  await daemon("stop");
  await closed;
  const started = Date.now();
  try {
    await c.call("daemon.status", {});
    assert.unreachable("the call fails");
  } catch (error) {
    const e = error as { code?: string; message?: string };
    assert.is(e.code, "daemon.disconnected");
    assert.match(e.message ?? "", /did not answer again within 1 s/);
  }
  assert.ok(Date.now() - started < 5000, "it gave up in time");
  await daemon("start");
});

test.run();
