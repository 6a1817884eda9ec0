// The proxy's lifecycle at its edges, in a real daemon: its thread crashing (the proxy's component
// shows the error, `proxy status` says it is not running, and a later `agent proxy start` serves
// again, on the same port), and a `proxy stop` that arrives while a start is under way (the
// proxy ends stopped: the stop waits for the start and stops what it started).
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { ProxyStatus } from "../../shared/protocol/proxy.js";
import { rpcConnect } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { type ProxyHome, proxyHome } from "./helpers.js";

let h: ProxyHome;

test.before(async () => {
  h = await proxyHome();
  // The daemon (started by the first CLI call) gets the hook: a request for /test/crash throws in the thread.
  h.env.AGENT_PROXY_TEST_CRASH = "1";
});

test.after(async () => {
  await h?.dispose();
});

const status = async (): Promise<ProxyStatus> => JSON.parse((await h.cli(["proxy", "status", "--json"])).stdout) as ProxyStatus;
const component = async (): Promise<{ status: string; detail?: string }> => JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout).components.proxy;
const reachable = (url: string) =>
  fetch(`${url}/models`).then(
    (r) => r.status,
    () => "refused" as const,
  );

test("a crash of the proxy's thread shows as the component's error; a later start serves again on the same port", async () => {
  const s = await h.startProxy();
  assert.is(await reachable(s.url!), 200);
  // The thread throws an uncaught error; the request itself may get its 404 or a dropped connection.
  await fetch(`http://127.0.0.1:${s.port}/test/crash`).catch(() => undefined);
  const failed = await waitFor("the proxy's component in error", async () => {
    const c = await component();
    return c.status === "error" && c;
  });
  assert.match(failed.detail ?? "", /its thread stopped: .*crashed on purpose/);
  assert.is((await status()).running, false);
  assert.is(await reachable(s.url!), "refused");
  const log = await h.cli(["logs", "--component", "proxy", "--json"]);
  assert.match(log.stdout, /proxy: its thread stopped/);

  // Started again on the port the crashed thread held: it was let go when the thread ended.
  const again = await h.cli(["proxy", "start", "--port", String(s.port), "--json"]);
  assert.is(again.code, 0, again.stderr);
  const restarted = JSON.parse(again.stdout) as ProxyStatus;
  assert.is(restarted.port, s.port);
  assert.is(await reachable(restarted.url!), 200);
  assert.is((await component()).status, "ok");
  assert.is((await h.cli(["proxy", "stop"])).code, 0);
});

test("a stop that arrives while a start is under way leaves the proxy stopped", async () => {
  const { rpc, close } = await rpcConnect(h.home);
  try {
    for (let round = 0; round < 3; round++) {
      // Both sent at once on one connection: the stop reaches the daemon while the start loads
      // the module, starts the thread and binds.
      const starting = rpc.sendRequest("proxy.start", { port: 0 }) as Promise<ProxyStatus>;
      const stopping = rpc.sendRequest("proxy.stop", {}) as Promise<{ stopped: boolean }>;
      const [started, stopped] = await Promise.all([starting, stopping]);
      assert.ok(started.running, "the start completed");
      assert.is(stopped.stopped, true, "the stop stopped what the start started");
      assert.is((await status()).running, false);
      assert.is(await reachable(started.url!), "refused");
      assert.is((await component()).status, "disabled");
    }
    // A start after them serves.
    const s = await h.startProxy();
    assert.is(await reachable(s.url!), 200);
  } finally {
    close();
  }
});

test.run();
