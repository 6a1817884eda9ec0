// `agent debug share` (docs/debug-and-update.md): one redacted bundle with every listed section,
// and none of the secrets planted in .env (secret-named or not), in config.yaml, in a profile's
// auth.json, in a URL's userinfo or in a log line; `--upload` POSTs it to debug.share_url (a local fake share server
// on 127.0.0.1) and prints the URL it answers with; without a share URL, a clear error.
import { mkdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const SECRETS = {
  env: "envsecret-9f8e7d6c5b4a",
  plain: "plainvalue-1029384756",
  config: "cfgsecret-5647382910",
  auth: "authtoken-abcdefabcdef123456",
  mcp: "mcpsecret-77665544332211",
  url: "urlpass-5566778899",
};

const h = tempHome("dbg");
let server: Server | null = null;
const received: Array<{ body: string; type: string | undefined }> = [];

test.after(async () => {
  await stopDaemon(h.home);
  server?.close();
  h.cleanup();
});

const cli = (args: string[]) => runCli(args, { home: h.home, timeoutMs: 60_000 });

function plant(): void {
  writeFileSync(join(h.home, ".env"), `MY_SERVICE_API_KEY=${SECRETS.env}\nSOME_SETTING=${SECRETS.plain}\n`, { mode: 0o600 });
  writeFileSync(
    join(h.home, "config.yaml"),
    [
      "_config_version: 13",
      "model:",
      `  base_url: http://bob:${SECRETS.url}@127.0.0.1:9/v1`,
      "gateway:",
      `  inspector_token: ${SECRETS.config}`,
      "mcp_servers:",
      "  gh:",
      "    command: node",
      "    args: [-e, 'setTimeout(()=>{}, 1)']",
      "    env:",
      `      GITHUB_TOKEN: ${SECRETS.mcp}`,
      "",
    ].join("\n"),
  );
  writeFileSync(join(h.home, "auth.json"), JSON.stringify({ providers: { example: { access_token: SECRETS.auth, expires_at: 1 } } }), { mode: 0o600 });
  mkdirSync(join(h.home, "logs"), { recursive: true, mode: 0o700 });
  writeFileSync(
    join(h.home, "logs", "legacy.log"),
    `${JSON.stringify({ level: "info", msg: `a line that leaked ${SECRETS.env}, ${SECRETS.plain}, ${SECRETS.auth} and ${SECRETS.mcp}` })}\n`,
  );
}

function assertNoSecret(text: string, where: string): void {
  for (const [name, value] of Object.entries(SECRETS)) assert.not.ok(text.includes(value), `the ${name} secret is in ${where}`);
}

test("the bundle holds every section, none of the planted secrets, and is 0600", async () => {
  plant();
  const added = await cli(["cron", "add", "every 1h", "say hi", "--name", "hourly", "--json"]);
  assert.is(added.code, 0, added.stderr);
  const r = await cli(["debug", "share", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout) as { path: string; sections: string[]; problems: unknown[]; uploaded_url: string | null };
  assert.ok(out.path.startsWith(join(h.home, "debug")), out.path);
  assert.is(statSync(out.path).mode & 0o777, 0o600);
  assert.is(out.uploaded_url, null);
  const text = readFileSync(out.path, "utf8");
  assertNoSecret(text, "the bundle");
  const b = JSON.parse(text) as Record<string, any>;
  for (const section of ["versions", "config", "daemon", "logs", "lsp", "mcp", "kanban", "cron", "channels"]) {
    assert.ok(section in b, `section ${section}`);
    assert.ok(out.sections.includes(section), `listed: ${section}`);
    assert.not.ok(b[section]?.error, `${section}: ${b[section]?.error}`);
  }
  assert.equal(out.problems, []);
  assert.is(b.versions.node, process.versions.node);
  assert.type(b.versions.app, "string");
  assert.type(b.versions.os.release, "string");
  assert.is(b.daemon.running, true);
  // The config: the token's key is there, its value is not; .env by names only.
  const entries = b.config.entries as Array<{ key: string; value: unknown }>;
  assert.is(entries.find((e) => e.key === "gateway.inspector_token")?.value, "[redacted]");
  assert.equal(b.config.env_files.default.sort(), ["MY_SERVICE_API_KEY", "SOME_SETTING"]);
  // The planted log line is there, scrubbed; the daemon's own log is there too.
  assert.match(b.logs.legacy.join("\n"), /a line that leaked \[redacted\]/);
  assert.ok(b.logs.daemon.length > 0);
  assert.ok(Array.isArray(b.mcp.default));
  assert.is(b.kanban.boards.default.dispatcher.dryRun, true);
  const job = b.cron.default.jobs.find((j: { name: string }) => j.name === "hourly");
  assert.ok(job, JSON.stringify(b.cron));
  assert.match(job.next_fire, /^\d{4}-\d\d-\d\dT/);
  assert.not.ok("prompt" in job, "a job's prompt is not in the bundle");
  assert.ok(Array.isArray(b.channels.channels));
  // Never the files themselves.
  assert.not.match(text, /"access_token"/);
});

test("--upload without debug.share_url: a clear error naming the key, the bundle still written", async () => {
  const r = await cli(["debug", "share", "--upload"]);
  assert.is(r.code, 1, r.stdout);
  assert.match(r.stderr, /debug\.share_url/);
  assert.match(r.stderr, /the bundle is at \S+debug-[^ ]+\.json/);
});

test("--upload POSTs the redacted bundle to debug.share_url and prints the URL the server answers", async () => {
  server = createServer((req: IncomingMessage, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      received.push({ body, type: req.headers["content-type"] });
      res.writeHead(201, { "content-type": "application/json" });
      res.end(JSON.stringify({ url: `http://127.0.0.1/share/${received.length}` }));
    });
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const set = await cli(["config", "set", "debug.share_url", `http://127.0.0.1:${port}/upload`]);
  assert.is(set.code, 0, set.stderr);
  const r = await cli(["debug", "share", "--upload"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /debug bundle written: \S+\.json/);
  assert.match(r.stdout, /uploaded: http:\/\/127\.0\.0\.1\/share\/1/);
  assert.is(received.length, 1);
  assert.is(received[0]!.type, "application/json");
  assertNoSecret(received[0]!.body, "the upload");
  const path = /debug bundle written: (\S+\.json)/.exec(r.stdout)![1]!;
  assert.is(received[0]!.body, readFileSync(path, "utf8"), "the upload is the bundle written");
});

test("an MCP server's stderr tail in the bundle loses the values of its env, headers and credential flags (mcp.json's too, whatever their names)", async () => {
  const leaky = (name: string) => `console.error("${name} boots with", process.env.GH, process.env.ODD, process.argv.slice(1).join(" ")); process.exit(3)`;
  const JSON_SECRETS = { gh: "mcpjson-gh-0a9b8c7d6e", odd: "mcpjson-odd-1f2e3d4c5b", flag: "mcpjson-flag-9z8y7x6w" };
  const CFG_SECRETS = { odd: "cfg-odd-env-5t4r3e2w1q", flag: "cfg-flag-value-0p9o8i7u" };
  writeFileSync(
    join(h.home, "mcp.json"),
    JSON.stringify({
      mcpServers: {
        leaky: {
          command: process.execPath,
          args: ["-e", leaky("json"), "--", "--api-key", JSON_SECRETS.flag],
          env: { GH: JSON_SECRETS.gh, ODD: JSON_SECRETS.odd },
        },
      },
    }),
  );
  const config = readFileSync(join(h.home, "config.yaml"), "utf8");
  writeFileSync(
    join(h.home, "config.yaml"),
    config.replace(
      "mcp_servers:\n",
      `mcp_servers:\n  leaky2:\n    command: ${JSON.stringify(process.execPath)}\n    args: [-e, ${JSON.stringify(leaky("cfg"))}, "--", "--token=${CFG_SECRETS.flag}"]\n    env:\n      ODD: ${CFG_SECRETS.odd}\n`,
    ),
  );
  assert.is((await cli(["daemon", "reload"])).code, 0);
  for (const name of ["leaky", "leaky2"]) await cli(["mcp", "restart", name]);
  const r = await cli(["debug", "share", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const text = readFileSync((JSON.parse(r.stdout) as { path: string }).path, "utf8");
  const servers = JSON.parse(text).mcp.default as Array<{ name: string; stderr_tail: string | null; last_error: string | null }>;
  const tails = servers.filter((s) => s.name.startsWith("leaky")).map((s) => `${s.stderr_tail ?? ""} ${s.last_error ?? ""}`);
  assert.is(tails.length, 2, JSON.stringify(servers));
  assert.match(tails.join("\n"), /json boots with \[redacted\] \[redacted\]/, tails.join("\n"));
  for (const [name, value] of Object.entries({ ...JSON_SECRETS, ...Object.fromEntries(Object.entries(CFG_SECRETS).map(([k, v]) => [`cfg_${k}`, v])) }))
    assert.not.ok(text.includes(value), `the ${name} secret is in the bundle`);
});

test.run();
