// scripts/bundle.mjs names chunks by their content's hash, so each build's differ. A process of
// the previous build that outlives a rebuild (a kanban worker `agent update` leaves running, an
// open TUI, `agent mcp serve` under another app) loads its lazy import()s later: they must still
// be there (the old build removed every chunk: ERR_MODULE_NOT_FOUND). Two builds back, they go.
import { spawn } from "node:child_process";
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const root = mkdtempSync(join(tmpdir(), "bundle-gen-"));
const dist = join(root, "dist");

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** tsc's output for the given version, then the bundle. */
function build(version: string): string[] {
  put(join(root, "cli", "main.ts"), "");
  put(join(root, "shared", "late.ts"), "");
  // The entry waits for a line on stdin, then loads a module lazily (as the TUI loads a view).
  put(
    join(dist, "cli", "main.js"),
    'process.stdin.once("data", async () => { const { value } = await import("../shared/late.js"); console.log(value); process.exit(0); });\nconsole.log("ready");\n',
  );
  put(join(dist, "shared", "late.js"), `export const value = ${JSON.stringify(version)};\n`);
  const r = spawnSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs"), dist], { encoding: "utf8" });
  assert.is(r.status, 0, r.stderr);
  return readdirSync(join(dist, "chunks")).filter((n) => n.endsWith(".js"));
}

test.after(() => rmSync(root, { recursive: true, force: true }));

test("a process of the previous build still loads its lazy chunks after a rebuild; two builds back they are removed", async () => {
  const first = build("one");
  const child = spawn(process.execPath, [join(dist, "cli", "main.js")], { stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  await waitFor(
    () => `the first build's process to start\n${err}`,
    () => out.includes("ready"),
  );
  const second = build("two");
  const fresh = second.filter((n) => !first.includes(n));
  assert.ok(fresh.length > 0, "the new build's chunk has a new name");
  child.stdin.end("go\n");
  assert.is(await closed, 0, err);
  assert.match(out, /ready\none/);
  build("three");
  for (const name of first) assert.not.ok(existsSync(join(dist, "chunks", name)), `${name} (two builds back) is removed`);
  for (const name of fresh) assert.ok(existsSync(join(dist, "chunks", name)), `${name} (the previous build) is kept`);
});

test.run();
