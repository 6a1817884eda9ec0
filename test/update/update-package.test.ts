// `agent update` of a package install (docs/debug-and-update.md): the app's folder is not a git
// work tree, so it tracks tagged releases. A fake npm registry on 127.0.0.1 says `latest` is
// 0.2.0 (and serves its tarball); the real npm asks it (npm_config_registry) and installs into
// a temp prefix (npm_config_prefix). --check reports without installing; the update installs
// agent@0.2.0 there; a second fake answering the installed version says up to date.
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { create as tarCreate } from "tar";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type CliResult, ROOT, tempHome } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";

const npmTest = testUnless(missingCommand("npm", ["--version"]));

/** Keys of the --json output are snake_case (docs/cli.md), as test/foundation/cli-json.test.ts checks for the other commands. */
function snakeOnly(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => snakeOnly(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [...(/^[a-z0-9]+(_[a-z0-9]+)*$/.test(k) ? [] : [`${path}.${k}`]), ...snakeOnly(v, `${path}.${k}`)]);
}

const root = mkdtempSync(join(tmpdir(), "updp-"));
const app = join(root, "app");
const prefix = join(root, "prefix");
const h = tempHome("updph");
let latest = "0.2.0";
let server: Server | null = null;
let registry = "";
const asked: string[] = [];

test.before(async () => {
  mkdirSync(app);
  writeFileSync(join(app, "package.json"), `${JSON.stringify({ name: "agent", version: "0.1.0", type: "module" })}\n`);
  cpSync(join(ROOT, "dist"), join(app, "dist"), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(app, "node_modules"));
  // The release's tarball: just its package.json.
  const pkg = join(root, "pkg", "package");
  mkdirSync(pkg, { recursive: true });
  writeFileSync(join(pkg, "package.json"), JSON.stringify({ name: "agent", version: "0.2.0", description: "the fake release" }));
  const tgz = join(root, "agent-0.2.0.tgz");
  await tarCreate({ gzip: true, cwd: join(root, "pkg"), file: tgz, portable: true }, ["package"]);
  const tarball = readFileSync(tgz);
  server = createServer((req, res) => {
    asked.push(req.url ?? "");
    if (req.url === "/agent") {
      const version = (v: string) => ({
        name: "agent",
        version: v,
        dist: {
          tarball: `${registry}agent/-/agent-${v}.tgz`,
          shasum: createHash("sha1").update(tarball).digest("hex"),
          integrity: `sha512-${createHash("sha512").update(tarball).digest("base64")}`,
        },
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ name: "agent", "dist-tags": { latest }, versions: { "0.1.0": version("0.1.0"), "0.2.0": version("0.2.0") } }));
    } else if (req.url === "/agent/-/agent-0.2.0.tgz") {
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.end(tarball);
    } else {
      res.writeHead(404, { "content-type": "application/json" });
      res.end('{"error":"not found"}');
    }
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  registry = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
});

test.after(() => {
  server?.close();
  h.cleanup();
  rmSync(root, { recursive: true, force: true });
});

function agent(args: string[]): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(app, "dist", "cli", "main.js"), ...args], {
      env: {
        ...process.env,
        AGENT_HOME: h.home,
        NO_COLOR: "1",
        npm_config_registry: registry,
        npm_config_prefix: prefix,
        npm_config_cache: join(root, "npm-cache"),
        npm_config_update_notifier: "false",
        npm_config_audit: "false",
        npm_config_fund: "false",
      },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => {
      child.kill("SIGKILL");
      reject(new Error(`agent ${args.join(" ")} timed out\n${stdout}\n${stderr}`));
    }, 90_000);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

npmTest("--check asks the registry for the newest tagged version and installs nothing", async () => {
  const r = await agent(["update", "--check", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.equal(snakeOnly(out), []);
  assert.is(out.kind, "package");
  assert.is(out.current, "0.1.0");
  assert.is(out.available, "0.2.0");
  assert.is(out.up_to_date, false);
  assert.is(out.updated, false);
  assert.ok(asked.includes("/agent"), asked.join(" "));
  assert.not.ok(existsSync(join(prefix, "lib", "node_modules", "agent")), "nothing installed");
});

npmTest("the update installs the newest release through npm; no daemon ran, so none is started", async () => {
  const r = await agent(["update", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.is(out.updated, true);
  assert.is(out.available, "0.2.0");
  const installed = JSON.parse(readFileSync(join(prefix, "lib", "node_modules", "agent", "package.json"), "utf8"));
  assert.is(installed.version, "0.2.0");
  assert.is(out.daemon.restarted, false);
  assert.match(out.daemon.note, /no daemon was running/);
});

npmTest("when the registry's latest is the installed version: up to date", async () => {
  latest = "0.1.0";
  const r = await agent(["update"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /package install at .* up to date \(0\.1\.0\)/);
});

test.run();
