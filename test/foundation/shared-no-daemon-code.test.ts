// shared/ is what the CLI and the TUI load: it imports no daemon code (a process the client
// starts, such as the daemon or the worker-output relay, is run by its path). The CLI's own
// folder has the same check in test/agent/kanban-worker.test.ts; this holds shared/ and tui/.
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../helpers/cli.js";

const files = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((d) => (d.isDirectory() ? files(join(dir, d.name)) : d.name.endsWith(".ts") ? [join(dir, d.name)] : []));

test("no file in shared/ or tui/ imports from daemon/", () => {
  const all = [...files(join(ROOT, "shared")), ...files(join(ROOT, "tui"))];
  assert.ok(all.length > 20, `only ${all.length} files found`);
  const offenders = all.filter((f) => /(?:from|import\()\s*["'][./]*daemon\//.test(readFileSync(f, "utf8"))).map((f) => relative(ROOT, f));
  assert.equal(offenders, []);
});

test.run();
