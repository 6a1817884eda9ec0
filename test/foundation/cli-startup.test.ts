// Every `agent` command is a new process, so what it loads at start is paid on every call (and
// thousands of times by the test suite). A command that only talks to the daemon loads the
// socket client and its own command module: never the protocol's zod schemas, the model
// providers' SDK or the Markdown renderer, which only the daemon (or the TUI) needs. The JSON-RPC
// library is inlined in the build (scripts/bundle.mjs): 17 CommonJS files in node_modules that each
// call paid to resolve, read and scan. And the files of our own a call loads stay few: with Node
// 20's ESM loader each costs about 0.3 ms of CPU, paid about 1,200 times per test-suite run.
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, ROOT, startedHome } from "../helpers/cli.js";

const TRACE = join(ROOT, "test", "fixtures", "module-trace.mjs");
const HEAVY = ["zod", "openai", "marked", "flexsearch", "tinypool", "chokidar", "blessed", "yaml"];
/** Files of the build (dist/) one such call may load: 21-22 on 2026-11-28 (the entry, its chunks, the command's). */
const MAX_OWN_FILES = 30;

let h: Awaited<ReturnType<typeof startedHome>>;
test.before(async () => {
  h = await startedHome();
});
test.after(async () => {
  await h.dispose();
});

/** Run the built CLI with the module tracer; the packages it loaded (node_modules/<name>) and how many files of dist/. */
function packagesLoaded(args: string[]): Promise<{ code: number | null; packages: string[]; own: number; stdout: string; stderr: string }> {
  const file = join(h.home, `trace-${args[0]}.txt`);
  rmSync(file, { force: true });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TRACE, CLI, ...args], {
      env: { ...process.env, AGENT_HOME: h.home, MODULE_TRACE_FILE: file, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const urls = [...new Set(readFileSync(file, "utf8").split("\n"))];
      const packages = [...new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter((p): p is string => !!p))];
      const own = urls.filter((u) => u.startsWith("file:") && u.includes("/dist/") && !u.includes("/node_modules/")).length;
      resolve({ code, packages, own, stdout, stderr });
    });
  });
}

for (const args of [
  ["kanban", "list", "--json"],
  ["config", "get", "model.name", "--json"],
  ["actors", "list", "--json"],
  ["sessions", "list", "--json"],
  ["cron", "list", "--json"],
  ["approvals", "list", "--json"],
  ["profile", "list", "--json"],
  ["daemon", "status", "--json"],
]) {
  test(`agent ${args.join(" ")} loads none of ${HEAVY.join(", ")}, nor vscode-jsonrpc's files, and at most ${MAX_OWN_FILES} of dist/`, async () => {
    const r = await packagesLoaded(args);
    assert.is(r.code, 0, r.stderr);
    // The daemon answered over the socket (the client's JSON-RPC ran), in JSON.
    assert.type(JSON.parse(r.stdout), "object");
    assert.equal(
      r.packages.filter((p) => HEAVY.includes(p) || p === "vscode-jsonrpc"),
      [],
    );
    assert.ok(r.own > 0 && r.own <= MAX_OWN_FILES, `loaded ${r.own} files of dist/`);
  });
}

test.run();
