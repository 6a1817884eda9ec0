// The proxy's relay runs in a thread of its own (daemon/proxy/proxy-thread.ts) while the config
// and the credential stay in the daemon's main thread: a stream of many small events and one of
// large events reach the caller byte-identical to what the upstream sent, every request gets the
// provider's key from the main thread, the status counts what the thread served, a busy port is
// refused with its reason, and a stop ends the listener (a start serves again). What one read of
// the upstream yields goes on as one chunk (a burst), while a paced stream goes on event by event.
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import { type AddressInfo, connect } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { waitFor } from "../helpers/wait.js";
import { ENV_KEY, type ProxyHome, proxyHome } from "./helpers.js";

/** Event `n` of a stream: varied lengths and multi-byte text, so chunk borders fall anywhere (also inside a character). */
const event = (n: number, size = 64) =>
  `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content: `tok${n} ${"é€x".repeat((n * 7919) % size)}` } }] })}\n\n`;

/**
 * An upstream that streams `events` deterministic SSE events of `size` bytes or so: each its own
 * write and send; with `burst`, all in one send; with `paced`, one each time the test calls
 * `next()` (the time it was sent is recorded), then [DONE].
 */
function streamingUpstream(): Promise<{ server: Server; baseUrl: string; bearers: string[]; next(): void; sentAt: number[] }> {
  const bearers: string[] = [];
  const sentAt: number[] = [];
  let next: () => void = () => {
    throw new Error("no paced stream is open");
  };
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      bearers.push(req.headers.authorization ?? "");
      const p = JSON.parse(body || "{}") as { events?: number; size?: number; burst?: boolean; paced?: boolean };
      const events = p.events ?? 1;
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      if (p.paced) {
        next = () => {
          sentAt.push(performance.now());
          if (i === events) return res.end("data: [DONE]\n\n");
          res.write(event(i++, p.size));
          res.socket?.uncork();
        };
        res.flushHeaders();
        return;
      }
      if (p.burst) {
        // One tick of writes: node:http corks them into one send.
        while (i < events) res.write(event(i++, p.size));
        return res.end("data: [DONE]\n\n");
      }
      const pump = () => {
        while (i < events) {
          const more = res.write(event(i++, p.size));
          res.socket?.uncork();
          if (!more) return res.once("drain", pump);
        }
        res.end("data: [DONE]\n\n");
      };
      pump();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () =>
      resolve({ server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bearers, next: () => next(), sentAt }),
    ),
  );
}

/**
 * POST `body` to `url` over a raw socket and read the chunked response chunk by chunk, as the
 * bytes arrive: each HTTP chunk's data and the time it was complete (`onChunk` sees it then).
 */
function rawChunks(
  url: string,
  body: unknown,
  onChunk: (data: Buffer, index: number) => void = () => undefined,
): Promise<{ status: number; chunks: Buffer[]; at: number[] }> {
  const u = new URL(url);
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    socket.write(
      `POST ${u.pathname} HTTP/1.1\r\nhost: ${u.host}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(payload)}\r\nconnection: close\r\n\r\n${payload}`,
    );
    let buf = Buffer.alloc(0);
    let status = 0;
    const chunks: Buffer[] = [];
    const at: number[] = [];
    let done = false;
    socket.on("data", (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!status) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString("latin1");
        status = Number(head.split(" ")[1]);
        if (!/transfer-encoding: chunked/i.test(head)) return reject(new Error(`not a chunked response: ${head}`));
        buf = buf.subarray(end + 4);
      }
      for (;;) {
        const eol = buf.indexOf("\r\n");
        if (eol < 0) return;
        const size = Number.parseInt(buf.subarray(0, eol).toString("latin1"), 16);
        if (buf.length < eol + 2 + size + 2) return;
        if (size === 0) {
          done = true;
          socket.end();
          return resolve({ status, chunks, at });
        }
        const data = Buffer.from(buf.subarray(eol + 2, eol + 2 + size));
        buf = buf.subarray(eol + 2 + size + 2);
        chunks.push(data);
        at.push(performance.now());
        onChunk(data, chunks.length - 1);
      }
    });
    socket.once("error", reject);
    socket.once("close", () => {
      if (!done) reject(new Error(`the response ended before its last chunk (status ${status}, ${chunks.length} chunks)`));
    });
  });
}

async function digest(url: string, body: unknown): Promise<{ status: number; sha: string; bytes: number }> {
  const r = await fetch(url, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });
  const buf = Buffer.from(await r.arrayBuffer());
  return { status: r.status, sha: createHash("sha256").update(buf).digest("hex"), bytes: buf.length };
}

let h: ProxyHome;
let up: Awaited<ReturnType<typeof streamingUpstream>>;

test.before(async () => {
  up = await streamingUpstream();
  // `bulk` uses acme's key variable, so the main thread attaches ENV_KEY to each relayed request.
  h = await proxyHome("", `  bulk:\n    base_url: ${up.baseUrl}\n    model: m1\n    api_key_env: ACME_KEY\n`);
});

test.after(async () => {
  await h?.dispose();
  await new Promise<void>((resolve) => {
    up?.server.close(() => resolve());
    up?.server.closeAllConnections();
  });
});

test("small and large events are relayed byte-identical, with the key from the main thread; status counts the requests", async () => {
  const s = await h.startProxy(["--provider", "bulk"]);
  const direct = `${up.baseUrl}/chat/completions`;
  const proxied = `${s.url}/chat/completions`;
  for (const body of [
    { stream: true, events: 5000, size: 40 }, // model-like: ~100–300 bytes each
    { stream: true, events: 300, size: 6000 }, // large: up to ~30 KB each, several socket reads per event
  ]) {
    const a = await digest(direct, body);
    const b = await digest(proxied, body);
    assert.is(b.status, 200);
    assert.ok(a.bytes > 100_000, `a real stream (${a.bytes} bytes)`);
    assert.is(b.bytes, a.bytes);
    assert.is(b.sha, a.sha, "byte-identical");
  }
  const viaProxy = up.bearers.filter((b) => b !== "");
  assert.equal(viaProxy, [`Bearer ${ENV_KEY}`, `Bearer ${ENV_KEY}`]);
  const status = JSON.parse((await h.cli(["proxy", "status", "--json"])).stdout);
  assert.is(status.requests, 2);
  assert.is(status.provider, "bulk");
});

test("a burst the upstream sends at once reaches the caller in fewer chunks, byte-identical", async () => {
  const s = await h.startProxy(["--provider", "bulk"]);
  const body = { stream: true, burst: true, events: 60, size: 30 };
  const direct = await rawChunks(`${up.baseUrl}/chat/completions`, body);
  const proxied = await rawChunks(`${s.url}/chat/completions`, body);
  assert.is(proxied.status, 200);
  assert.is(direct.chunks.length, 61, "the upstream: one chunk per write");
  assert.ok(proxied.chunks.length <= 6, `what arrived in one read went on as one chunk (${proxied.chunks.length} chunks for 61 writes)`);
  assert.ok(Buffer.concat(proxied.chunks).equals(Buffer.concat(direct.chunks)), "byte-identical");
});

test("a paced stream arrives event by event, each as soon as it was sent", async () => {
  const s = await h.startProxy(["--provider", "bulk"]);
  const events = 20;
  const first = up.sentAt.length;
  let received = 0;
  const reading = rawChunks(`${s.url}/chat/completions`, { stream: true, paced: true, events, size: 40 }, () => {
    received++;
  });
  // One event every 50 ms, the next sent only once the caller has the one before: a relay that
  // held an event back (to gather it with the next) would never see the next one come.
  for (let i = 0; i <= events; i++) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
    // The first waits for the proxied request to reach the upstream.
    await waitFor("the paced stream's request at the upstream", () => {
      try {
        up.next();
        return true;
      } catch {
        return false;
      }
    });
    await waitFor(`event ${i} at the caller`, () => received > i, 5_000);
  }
  const r = await reading;
  assert.is(r.chunks.length, events + 1, "one chunk per event, and [DONE]");
  assert.is(r.chunks[events]!.toString(), "data: [DONE]\n\n");
  for (let i = 0; i < events; i++) assert.is(r.chunks[i]!.toString(), event(i, 40), `chunk ${i} is event ${i}, alone`);
  const delays = r.at.slice(0, events).map((t, i) => t - up.sentAt[first + i]!);
  const sorted = [...delays].sort((a, b) => a - b);
  assert.ok(sorted[events >> 1]! < 50, `each event arrives before the next is due: delays ${delays.map((d) => d.toFixed(1)).join(", ")} ms`);
});

test("a stop ends the listener and a start serves again; a busy port is refused with its reason", async () => {
  const s = await h.startProxy(["--provider", "bulk"]);
  const stop = await h.cli(["proxy", "stop"]);
  assert.is(stop.code, 0, stop.stderr);
  const after = await fetch(`${s.url}/models`).then(
    () => "answered",
    () => "refused",
  );
  assert.is(after, "refused");
  const again = await h.startProxy(["--provider", "bulk"]);
  const r = await digest(`${again.url}/chat/completions`, { stream: true, events: 10, size: 8 });
  assert.is(r.status, 200);
  const status = JSON.parse((await h.cli(["proxy", "status", "--json"])).stdout);
  assert.is(status.requests, 1, "a new listener counts from zero");
  const busy = await h.cli(["proxy", "start", "--provider", "bulk", "--port", new URL(up.baseUrl).port]);
  assert.is.not(busy.code, 0);
  assert.match(busy.stderr, /the port is in use/);
});

test.run();
