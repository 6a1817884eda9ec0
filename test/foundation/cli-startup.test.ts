// Every `agent` command is a new process, so what it loads at start is paid on every call (and
// thousands of times by the test suite). A command that only talks to the daemon loads the
// socket client and its own command module: never the protocol's zod schemas, the model
// providers' SDK or the Markdown renderer, which only the daemon (or the TUI) needs.
import { spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, ROOT, startedHome } from "../helpers/cli.js";

const TRACE = join(ROOT, "test", "fixtures", "module-trace.mjs");
const HEAVY = ["zod", "openai", "marked", "flexsearch", "tinypool", "chokidar", "blessed"];

let h: Awaited<ReturnType<typeof startedHome>>;
test.before(async () => {
  h = await startedHome();
});
test.after(async () => {
  await h.dispose();
});

/** Run the built CLI with the module tracer; the packages it loaded (node_modules/<name>). */
function packagesLoaded(args: string[]): Promise<{ code: number | null; packages: string[]; stderr: string }> {
  const file = join(h.home, `trace-${args[0]}.txt`);
  rmSync(file, { force: true });
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", TRACE, CLI, ...args], {
      env: { ...process.env, AGENT_HOME: h.home, MODULE_TRACE_FILE: file, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => {
      const urls = readFileSync(file, "utf8").split("\n");
      const packages = [...new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter((p): p is string => !!p))];
      resolve({ code, packages, stderr });
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
  test(`agent ${args.join(" ")} loads none of ${HEAVY.join(", ")}`, async () => {
    const r = await packagesLoaded(args);
    assert.is(r.code, 0, r.stderr);
    assert.ok(r.packages.includes("vscode-jsonrpc"), `the tracer saw the socket client: ${r.packages.join(", ")}`);
    assert.equal(
      r.packages.filter((p) => HEAVY.includes(p)),
      [],
    );
  });
}

test.run();
