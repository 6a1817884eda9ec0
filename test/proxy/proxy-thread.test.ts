// The proxy's relay runs in a thread of its own (daemon/proxy/proxy-thread.ts) while the config
// and the credential stay in the daemon's main thread: a stream of many small events and one of
// large events reach the caller byte-identical to what the upstream sent, every request gets the
// provider's key from the main thread, the status counts what the thread served, a busy port is
// refused with its reason, and a stop ends the listener (a start serves again).
import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ENV_KEY, type ProxyHome, proxyHome } from "./helpers.js";

/** An upstream that streams `events` deterministic SSE events of `size` bytes or so, each its own write. */
function streamingUpstream(): Promise<{ server: Server; baseUrl: string; bearers: string[] }> {
  const bearers: string[] = [];
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      bearers.push(req.headers.authorization ?? "");
      const p = JSON.parse(body || "{}") as { events?: number; size?: number };
      res.writeHead(200, { "content-type": "text/event-stream" });
      let i = 0;
      const pump = () => {
        while (i < (p.events ?? 1)) {
          const n = i++;
          // Varied lengths and multi-byte text, so chunk borders fall anywhere (also inside a character).
          const content = `tok${n} ${"é€x".repeat((n * 7919) % (p.size ?? 64))}`;
          const more = res.write(`data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content } }] })}\n\n`);
          res.socket?.uncork();
          if (!more) return res.once("drain", pump);
        }
        res.end("data: [DONE]\n\n");
      };
      pump();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, "127.0.0.1", () => resolve({ server, baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, bearers })),
  );
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
