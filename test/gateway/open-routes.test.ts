/**
 * The one exemption from the gateway's access rules (daemon/http/access.ts, "Exemption"): a
 * platform route mounted with `mountOpen` (the LINE webhook under /line/) is served without the
 * Host, Origin and token rules, because it authenticates every request itself; everything else on
 * the same listener still gets those rules, and nothing but a platform prefix can be mounted open.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { GatewayServer } from "../../daemon/gateway/server.js";
import { HttpPlugins } from "../../daemon/http/plugins.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { request } from "node:http";

let server!: GatewayServer;
let url = "";
const plugins = new HttpPlugins();
const seen: string[] = [];

test.before(async () => {
  plugins.mountOpen("/line/", async (req, res, path) => {
    seen.push(`${req.method} ${path}`);
    res.writeHead(200, { "content-type": "text/plain" });
    res.end("open");
  });
  server = new GatewayServer({
    settings: {
      host: "127.0.0.1",
      port: 0,
      maxBodyBytes: 64 * 1024,
      inspector: { token: "", production: false },
      access: { corsOrigins: [], allowedHosts: [], token: "gateway-secret" },
    },
    runtime: () => undefined,
    log: silentLogger,
    plugins,
  });
  url = await server.start();
});
test.after(async () => {
  await server?.stop();
});

/** A raw request (fetch cannot set Host). */
function get(path: string, headers: Record<string, string>): Promise<number> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const req = request({ host: hostname, port, path, method: "POST", headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end("{}");
  });
}

test("a /line/ route is reached from a reverse proxy's Host, a foreign Origin and without the gateway token", async () => {
  const foreign = { host: "bot.example.com", origin: "https://evil.example" };
  assert.is(await get("/line/webhook", foreign), 200);
  assert.equal(seen, ["POST /line/webhook"]);
  // The same request anywhere else on the listener is refused as before.
  assert.is(await get("/health", foreign), 403);
  assert.is(await get("/gateway/x/action/y", { host: "127.0.0.1" }), 401);
  assert.is(await get("/api/plugins/kanban/boards", { host: "bot.example.com" }), 403);
  // Dot segments are refused before the route runs.
  assert.is(await get("/line/media/%2e%2e/x", { host: "127.0.0.1" }), 400);
  assert.is(seen.length, 1);
});

test("only a platform prefix can be mounted open", () => {
  for (const prefix of ["/", "/gateway/", "/api/", "/dashboard/", "/line", "/line/x/"]) {
    assert.throws(() => plugins.mountOpen(prefix, async () => undefined), /platform prefix/, prefix);
  }
});

test.run();
