import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect, type Socket } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PROTOCOL_VERSION } from "../../shared/version.js";
import { rpcConnect, runCli, startedHome, waitFor } from "../helpers/cli.js";

type Reply = {
  jsonrpc: string;
  id: unknown;
  result?: unknown;
  error?: { code: number; message: string; data?: { code?: string; message?: string; metadata?: unknown } };
};

/** A raw socket to the daemon: framed writes, framed replies in order, and the moment it closed. */
class RawSession {
  readonly replies: Reply[] = [];
  /** Sizes in bytes of each reply's body. */
  readonly sizes: number[] = [];
  readonly closed: Promise<void>;
  private buffer = Buffer.alloc(0);
  private waiters: Array<() => void> = [];

  private constructor(readonly socket: Socket) {
    socket.on("data", (d: Buffer) => {
      this.buffer = Buffer.concat([this.buffer, d]);
      for (;;) {
        const end = this.buffer.indexOf("\r\n\r\n");
        if (end < 0) return;
        const length = Number(/Content-Length: (\d+)/i.exec(this.buffer.subarray(0, end).toString())?.[1]);
        if (this.buffer.length < end + 4 + length) return;
        this.sizes.push(length);
        this.replies.push(JSON.parse(this.buffer.subarray(end + 4, end + 4 + length).toString()));
        this.buffer = this.buffer.subarray(end + 4 + length);
        for (const w of this.waiters.splice(0)) w();
      }
    });
    socket.on("error", () => undefined);
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
  }

  static async open(home: string, initialize = true): Promise<RawSession> {
    const socket = connect(join(home, "daemon.sock"));
    await new Promise<void>((resolve, reject) => (socket.once("connect", resolve), socket.once("error", reject)));
    const s = new RawSession(socket);
    if (initialize) {
      s.send(JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: PROTOCOL_VERSION, clientVersion: "test" } }));
      await s.reply(0);
    }
    return s;
  }

  send(body: string): void {
    this.socket.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  }

  /** The n-th reply (0-based), once it has arrived. */
  async reply(n: number, timeoutMs = 10_000): Promise<Reply> {
    const deadline = Date.now() + timeoutMs;
    while (this.replies.length <= n) {
      if (Date.now() > deadline) throw new Error(`no reply #${n}; got ${JSON.stringify(this.replies)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.max(0, deadline - Date.now()));
        this.waiters.push(() => (clearTimeout(timer), resolve()));
      });
    }
    return this.replies[n]!;
  }

  close(): void {
    this.socket.destroy();
  }
}

function rssBytes(pid: number): number {
  const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
  return Number(kb) * 1024;
}

async function assertStillServes(home: string): Promise<void> {
  const c = await rpcConnect(home);
  try {
    assert.equal(((await c.rpc.sendRequest("ping", {})) as { pong: boolean }).pong, true);
  } finally {
    c.close();
  }
}

// The cases are independent (each its own connection, its own actor): one daemon for the file.
// The memory test goes first, before the others' large inputs.
let h: Awaited<ReturnType<typeof startedHome>>;
test.before(async () => {
  h = await startedHome();
});
test.after(async () => {
  await h.dispose();
});

test("a message announcing more than the size limit is refused with an error, the connection closes and memory stays flat", async () => {
  const s = await RawSession.open(h.home);
  const before = rssBytes(h.pid);
  s.socket.write("Content-Length: 4000000000\r\n\r\n");
  // Keep streaming the announced body until the daemon closes the connection (at most 256 MB).
  const chunk = Buffer.alloc(1024 * 1024, 0x61);
  let sent = 0;
  let closed = false;
  void s.closed.then(() => (closed = true));
  while (!closed && sent < 256 * 1024 * 1024) {
    if (!s.socket.write(chunk)) await Promise.race([new Promise((r) => s.socket.once("drain", r)), s.closed]);
    sent += chunk.length;
  }
  await s.closed;
  const reply = await s.reply(1);
  assert.is(reply.id, null);
  assert.is(reply.error?.code, -32600);
  assert.is(reply.error?.data?.code, "rpc.message_too_large");
  assert.match(reply.error!.message, /4000000000 bytes is over the daemon's limit/);
  assert.ok(rssBytes(h.pid) - before < 32 * 1024 * 1024, `the daemon grew by ${rssBytes(h.pid) - before} bytes`);
  await assertStillServes(h.home);
});

test("a header block that never ends is refused and the connection closes", async () => {
  const s = await RawSession.open(h.home, false);
  s.socket.write(`X-Padding: ${"x".repeat(20_000)}\r\n`);
  await s.closed;
  const reply = await s.reply(0);
  assert.is(reply.error?.data?.code, "rpc.bad_framing");
  await assertStillServes(h.home);
});

test("a message without a Content-Length header is refused and the connection closes", async () => {
  const s = await RawSession.open(h.home, false);
  s.socket.write('Content-Type: application/json\r\n\r\n{"jsonrpc":"2.0","id":1,"method":"ping"}');
  await s.closed;
  assert.is((await s.reply(0)).error?.data?.code, "rpc.bad_framing");
});

test("messages within the limit still pass, split anywhere across writes", async () => {
  const s = await RawSession.open(h.home);
  const body = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping", params: {} });
  const framed = Buffer.from(`Content-Length: ${body.length}\r\n\r\n${body}Content-Length: ${body.length}\r\n\r\n${body.replace('"id":1', '"id":2')}`);
  for (let i = 0; i < framed.length; i += 7) s.socket.write(framed.subarray(i, i + 7));
  for (const id of [1, 2]) {
    const reply = await s.reply(id);
    assert.is(reply.id, id);
    assert.ok(reply.result, JSON.stringify(reply));
  }
  s.close();
});

test("a batch array gets an Invalid Request error instead of silence", async () => {
  const s = await RawSession.open(h.home);
  s.send(JSON.stringify([{ jsonrpc: "2.0", id: 1, method: "ping", params: {} }]));
  s.send("[]");
  for (const n of [1, 2]) {
    const reply = await s.reply(n);
    assert.is(reply.id, null);
    assert.is(reply.error?.code, -32600);
    assert.is(reply.error?.data?.code, "rpc.invalid_request");
    assert.match(reply.error!.message, /batch/);
  }
  s.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping", params: {} }));
  assert.is((await s.reply(3)).id, 3, "the connection keeps working");
  s.close();
});

test("null, number and string bodies get an Invalid Request error", async () => {
  const s = await RawSession.open(h.home);
  const bodies = ["null", "42", '"ping"', "true"];
  for (const body of bodies) s.send(body);
  for (let n = 1; n <= bodies.length; n++) {
    const reply = await s.reply(n);
    assert.is(reply.id, null);
    assert.is(reply.error?.code, -32600, bodies[n - 1]);
  }
  s.close();
});

test("a request without a method, or with an id that is not a string or number, gets an Invalid Request error", async () => {
  const s = await RawSession.open(h.home);
  s.send(JSON.stringify({ jsonrpc: "2.0", id: 7 }));
  s.send(JSON.stringify({ jsonrpc: "2.0", id: { x: 1 }, method: "ping" }));
  const noMethod = await s.reply(1);
  assert.is(noMethod.id, 7);
  assert.is(noMethod.error?.code, -32600);
  const badId = await s.reply(2);
  assert.is(badId.id, null);
  assert.is(badId.error?.code, -32600);
  s.close();
});

test("an error reply repeats only a bounded part of a huge input", async () => {
  const s = await RawSession.open(h.home);
  const key = "k".repeat(5 * 1024 * 1024);
  s.send(JSON.stringify({ jsonrpc: "2.0", id: 1, method: "config.set", params: { key, value: "1" } }));
  s.send(JSON.stringify({ jsonrpc: "2.0", id: 2, method: "x".repeat(1024 * 1024), params: {} }));
  s.send(JSON.stringify({ jsonrpc: "2.0", id: 3, method: "config.get", params: { [key]: 1 } }));
  s.send(JSON.stringify({ jsonrpc: "2.0", id: key, method: "ping", params: {} }));
  for (const n of [1, 2, 3, 4]) {
    const reply = await s.reply(n);
    assert.ok(reply.error, `reply ${n} is an error`);
    assert.ok(s.sizes[n]! < 16 * 1024, `reply ${n} is ${s.sizes[n]} bytes`);
  }
  assert.match((await s.reply(1)).error!.message, /more characters/);
  s.close();
});

test("a result JSON cannot hold (a BigInt, a cycle) gets a stable error code and the connection keeps working", async () => {
  mkdirSync(join(h.home, "actors"), { recursive: true });
  writeFileSync(
    join(h.home, "actors", "odd.mjs"),
    "export const odd = { state: {}, actions: { big: () => 10n, cycle: () => { const a = {}; a.self = a; return a; } } };\n",
  );
  // The daemon loads a module written while it runs on its own (file watcher, then the
  // runner's worker thread): create once the definition is there.
  const created = await waitFor("the odd module to be loaded", async () => {
    const r = await runCli(["actors", "create", "odd", "--json"], { home: h.home });
    if (r.code !== 0 && !/actor\.name_not_found/.test(r.stderr + r.stdout)) throw new Error(r.stderr);
    return r.code === 0 ? r : null;
  });
  const actorId = JSON.parse(created.stdout).actor_id as string;
  const c = await rpcConnect(h.home);
  try {
    for (const action of ["big", "cycle"]) {
      const error = (await c.rpc.sendRequest("actors.call", { actorId, action, args: [] }).then(
        () => assert.unreachable(`${action} answered`),
        (e: unknown) => e,
      )) as { code: number; data?: { code?: string }; message: string };
      assert.is(error.data?.code, "rpc.unserializable_result", action);
      assert.not.match(error.message, /serialize a BigInt|circular/i);
    }
    assert.equal(((await c.rpc.sendRequest("ping", {})) as { pong: boolean }).pong, true);
  } finally {
    c.close();
  }
  const cli = await runCli(["actors", "call", actorId, "big"], { home: h.home });
  assert.is(cli.code, 1);
  assert.match(cli.stderr, /cannot be sent as JSON/);
});

test.run();
