import { connect } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { rpcConnect, runCli, startedHome } from "../helpers/cli.js";

type RpcError = { code: number; message: string; data?: { code?: string } };

async function rejection(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (error) {
    return error as RpcError;
  }
  throw new Error("expected the call to fail");
}

/** Send raw bytes with Content-Length framing and collect the first framed answer. */
function rawExchange(home: string, body: string): Promise<{ id: unknown; error?: RpcError }> {
  return new Promise((resolve, reject) => {
    const socket = connect(join(home, "daemon.sock"));
    let data = "";
    const timer = setTimeout(() => (socket.destroy(), reject(new Error(`no answer; got ${JSON.stringify(data)}`))), 5000);
    socket.on("error", reject);
    socket.on("data", (d) => {
      data += d;
      const m = /Content-Length: (\d+)\r\n\r\n/.exec(data);
      if (m && data.length >= m.index + m[0].length + Number(m[1])) {
        clearTimeout(timer);
        socket.destroy();
        resolve(JSON.parse(data.slice(m.index + m[0].length, m.index + m[0].length + Number(m[1]))));
      }
    });
    socket.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  });
}

async function assertStillUp(home: string, pid: number): Promise<void> {
  const status = await runCli(["daemon", "status", "--json"], { home });
  assert.is(status.code, 0, status.stderr);
  assert.is(JSON.parse(status.stdout).pid, pid);
}

// The cases are independent (each its own connection): one daemon for the file.
let h: Awaited<ReturnType<typeof startedHome>>;
test.before(async () => {
  h = await startedHome();
});
test.after(async () => {
  await h.dispose();
});

test("a client of another protocol version is told so, with both versions and how to fix it", async () => {
  const c = await rpcConnect(h.home, { initialize: false });
  const error = await rejection(c.rpc.sendRequest("initialize", { protocolVersion: 999, clientVersion: "9.9.9" }));
  assert.is(error.code, -32003);
  assert.is(error.data?.code, "rpc.protocol_mismatch");
  assert.match(error.message, /protocol 999/);
  assert.match(error.message, /protocol 1\b/);
  assert.match(error.message, /agent daemon restart/);
  const notYet = await rejection(c.rpc.sendRequest("ping", {}));
  assert.is(notYet.code, -32002, "a refused handshake leaves the connection uninitialized");
  c.close();
  await assertStillUp(h.home, h.pid);
});

test("a call before initialize is refused", async () => {
  const c = await rpcConnect(h.home, { initialize: false });
  const error = await rejection(c.rpc.sendRequest("daemon.status", {}));
  assert.is(error.code, -32002);
  assert.is(error.data?.code, "rpc.not_initialized");
  c.close();
});

test("malformed JSON gets a parse error and the daemon stays up", async () => {
  const answer = await rawExchange(h.home, "{this is not json");
  assert.is(answer.id, null);
  assert.is(answer.error?.code, -32700);
  await assertStillUp(h.home, h.pid);
});

test("an unknown method gets method-not-found and the connection keeps working", async () => {
  const c = await rpcConnect(h.home);
  const error = await rejection(c.rpc.sendRequest("no.such.method", {}));
  assert.is(error.code, -32601);
  assert.is(error.data?.code, "rpc.method_not_found");
  assert.equal(((await c.rpc.sendRequest("ping", {})) as { pong: boolean }).pong, true);
  c.close();
  await assertStillUp(h.home, h.pid);
});

test("wrong parameter types get invalid-params naming the parameter, and the daemon stays up", async () => {
  const c = await rpcConnect(h.home);
  const error = await rejection(c.rpc.sendRequest("config.get", { key: 42 }));
  assert.is(error.code, -32602);
  assert.is(error.data?.code, "rpc.invalid_params");
  assert.match(error.message, /key/);
  const extra = await rejection(c.rpc.sendRequest("ping", { delayMs: "soon" }));
  assert.is(extra.code, -32602);
  c.close();
  await assertStillUp(h.home, h.pid);
});

test("round trips over the socket: sequential and pipelined pings all answer", async () => {
  const c = await rpcConnect(h.home);
  for (let i = 0; i < 20; i++) assert.is(((await c.rpc.sendRequest("ping", {})) as { pong: boolean }).pong, true);
  const answers = (await Promise.all(Array.from({ length: 200 }, () => c.rpc.sendRequest("ping", {})))) as Array<{ pong: boolean }>;
  assert.is(answers.filter((a) => a.pong).length, 200);
  c.close();
});

test.run();
