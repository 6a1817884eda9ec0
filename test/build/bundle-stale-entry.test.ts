// scripts/bundle.mjs on a build tree of its own (a temp dir: sources beside dist/, as in the repo).
// tsc never deletes the output of a source since removed or renamed; the bundler refuses to
// bundle a bundled entry, so such a leftover (bundled by the earlier build) stopped every later
// `npm run build`, `agent update`'s build included. It goes; the live entries are bundled.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../helpers/cli.js";

const MARK = "// agent: bundled entry (scripts/bundle.mjs)";
const root = mkdtempSync(join(tmpdir(), "bundle-"));
const dist = join(root, "dist");

function put(path: string, text: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/** What tsc leaves: a source and its output, for each live module. */
function tscOutput(): void {
  put(join(root, "cli", "main.ts"), "");
  put(join(root, "shared", "greet.ts"), "");
  put(join(root, "daemon", "work-thread.ts"), "");
  put(join(dist, "cli", "main.js"), 'import { greet } from "../shared/greet.js";\nconsole.log(greet());\n');
  put(join(dist, "shared", "greet.js"), 'export const greet = () => "hi";\n');
  put(join(dist, "daemon", "work-thread.js"), 'import { greet } from "../shared/greet.js";\ngreet();\n');
}

const bundle = () => spawnSync(process.execPath, [join(ROOT, "scripts", "bundle.mjs"), dist], { encoding: "utf8" });

test.after(() => rmSync(root, { recursive: true, force: true }));

test("an entry left bundled by an earlier build, its source since removed, does not stop the build", () => {
  tscOutput();
  // The earlier build's bundled thread, whose source was renamed away since.
  put(join(dist, "daemon", "old-thread.js"), `${MARK}\nconsole.log("old");\n`);
  put(join(dist, "daemon", "old-thread.js.map"), "{}");
  const r = bundle();
  assert.is(r.status, 0, r.stderr);
  assert.not.ok(existsSync(join(dist, "daemon", "old-thread.js")), "the leftover entry is removed");
  assert.not.ok(existsSync(join(dist, "daemon", "old-thread.js.map")));
  assert.ok(readFileSync(join(dist, "cli", "main.js"), "utf8").includes(MARK), "the live entries are bundled");
  assert.ok(readFileSync(join(dist, "daemon", "work-thread.js"), "utf8").includes(MARK));
  assert.is(execFileSync(process.execPath, [join(dist, "cli", "main.js")], { encoding: "utf8" }).trim(), "hi");
});

test("bundling a bundle is still refused: tsc must run first", () => {
  const r = bundle();
  assert.is(r.status, 1);
  assert.match(r.stderr, /bundled already: run tsc first/);
});

test.run();
