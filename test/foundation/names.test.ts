// One meaning per name (issue 34 §2, docs/design-notes.md "Runner, worker, thread"): a "worker"
// is a kanban worker process, the "runner" is the actor module runner, and a worker-thread
// script is named `*-thread.ts` and found through daemon/thread-script.ts.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
const PRODUCT = ["daemon", "shared", "cli", "tui"];
/** The kanban worker's own files: its entry (`agent chat -q` for a task) and what the daemon hosts for it. */
const KANBAN_WORKER_FILES = new Set(["daemon/agent/worker-main.ts", "daemon/agent/worker-host.ts"]);

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(ROOT, dir))) {
    const path = join(dir, name);
    if (statSync(join(ROOT, path)).isDirectory()) out.push(...filesUnder(path));
    else if (path.endsWith(".ts")) out.push(path);
  }
  return out;
}
const files = PRODUCT.flatMap(filesUnder);

test("'runner' in a path is the actor module runner's, and nothing else's", () => {
  const stray = files.filter((f) => /runner/i.test(f) && !f.startsWith("daemon/actors/runner/"));
  assert.equal(stray, []);
});

test("'worker' in a file name is the kanban worker's, and nothing else's", () => {
  const stray = files.filter((f) => /worker/i.test(basename(f)) && !KANBAN_WORKER_FILES.has(f));
  assert.equal(stray, []);
});

test("every worker-thread script is a *-thread.ts next to the module that starts it", () => {
  const started: string[] = [];
  for (const f of files) {
    const text = readFileSync(join(ROOT, f), "utf8");
    for (const m of text.matchAll(/threadScript\(import\.meta\.url, "([^"]+)"\)/g)) {
      const script = m[1]!;
      started.push(relative(ROOT, join(ROOT, dirname(f), script)));
      assert.match(script, /-thread\.js$/, `${f} starts ${script}`);
      assert.ok(existsSync(join(ROOT, dirname(f), script.replace(/\.js$/, ".ts"))), `${f}: no source for ${script}`);
    }
  }
  assert.ok(started.length >= 4, `found the thread starters: ${started.join(", ")}`);
  // And no *-thread.ts is left that nothing starts.
  const threads = files.filter((f) => f.endsWith("-thread.ts")).map((f) => f.replace(/\.ts$/, ".js"));
  assert.equal(threads.sort(), started.sort());
});

test.run();
