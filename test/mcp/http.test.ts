import { spawn, type ChildProcess } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { EVERYTHING } from "./helpers.js";

let everything: ChildProcess;
let everythingUrl = "";
let refusing: Server;
let refusingUrl = "";
let h: Awaited<ReturnType<typeof chatHome>>;

/** A free port: listen on 0, read it, close. */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

test.before(async () => {
  const port = await freePort();
  everything = spawn(process.execPath, [EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdio: ["ignore", "ignore", "pipe"] });
  let err = "";
  everything.stderr!.on("data", (d) => (err += d));
  await waitFor(
    () => `server-everything over HTTP to listen: ${err}`,
    () => /listening on port/.test(err),
    15_000,
  );
  everythingUrl = `http://127.0.0.1:${port}/mcp`;
  // 401 on /auth, 500 on /broken.
  refusing = createServer((req, res) => {
    req.resume();
    res.writeHead(req.url?.startsWith("/auth") ? 401 : 500, { "content-type": "text/plain" }).end("no");
  });
  await new Promise<void>((r) => refusing.listen(0, "127.0.0.1", r));
  refusingUrl = `http://127.0.0.1:${(refusing.address() as AddressInfo).port}`;
  h = await chatHome(
    {},
    [
      "mcp_servers:",
      "  web:",
      `    url: ${everythingUrl}`,
      "    headers:",
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's own ${VAR}, expanded by the daemon
      "      X-Token: ${WEB_TOKEN}",
      "  locked:",
      `    url: ${refusingUrl}/auth`,
      "  down:",
      `    url: ${refusingUrl}/broken`,
      "",
    ].join("\n"),
  );
  h.env.WEB_TOKEN = "t0ken";
});

test.after(async () => {
  await h.dispose();
  everything.kill();
  await new Promise((r) => refusing.close(r));
});

test("streamable HTTP: echo and get-sum of server-everything through a chat turn; 401 and 500 servers are named and left out", async () => {
  h.fake.setScript([
    {
      toolCalls: [
        { name: "mcp_web_echo", arguments: { message: "over http" } },
        { name: "mcp_web_get-sum", arguments: { a: 2, b: 40 } },
      ],
    },
    { text: "Done." },
  ]);
  const r = await h.chat(["-q", "go"]);
  assert.is(r.code, 0, r.stderr);
  const seen = toolMessages(h.fake, 1).map((m) => m.content);
  assert.match(seen[0]!, /Echo: over http/);
  assert.match(seen[1]!, /42/);
  assert.match(r.stderr, /MCP server locked is unavailable.*answered 401 \(not authorized/);
  assert.match(r.stderr, /MCP server down is unavailable.*500/);
});

test("agent mcp test of a 401 server fails with exit 1 and says why", async () => {
  const t = await h.cli(["mcp", "test", "locked"]);
  assert.is(t.code, 1, t.stderr);
  assert.match(t.stdout, /locked: failed after [\d.]+ ms: .*401/);
});

test.run();
