// One formatting of a running kanban worker (shared/kanban-ps-row.ts), used by both
// `agent kanban ps` and the TUI's workers view: the cells, and no second copy in either caller.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { psTable } from "../../cli/commands/kanban.js";
import { elapsedText, sizeText, WORKER_COLUMNS, workerCells, workerTitle } from "../../shared/kanban-ps-row.js";
import type { WorkerProcess } from "../../shared/protocol/kanban.js";
import { ROOT } from "../helpers/cli.js";

const NOW = 1_800_000_000_000;
const worker: WorkerProcess = {
  task_id: "t-abc123",
  board: "default",
  title: "Fix the \x1b[31mred\x1b[0m build\nnow",
  profile: "coder",
  run_id: "r-1",
  pid: 4242,
  pgid: 4242,
  processes: 3,
  cpu_seconds: 12.345,
  cpu_percent: 87.66,
  rss_bytes: 50 * 1024 * 1024 + 300 * 1024,
  started_at: NOW - 125_000,
  runtime_seconds: 125,
  last_heartbeat: NOW - 4_000,
  log_path: null,
  log_bytes: 2048,
  adopted: false,
};

test("the cells of one worker", () => {
  assert.equal(workerCells(worker, NOW), ["t-abc123", "coder", "4242", "3", "87.7", "12.3s", "50.3 MiB", "2m", "4s ago", "2.0 KiB"]);
  assert.is(WORKER_COLUMNS.length, workerCells(worker, NOW).length);
  assert.is(workerTitle(worker), "Fix the red build now");
  assert.is(sizeText(512), "512 B");
  assert.is(elapsedText(NOW - 3 * 86_400_000, NOW), "3d");
});

test("kanban ps prints the shared cells under the shared headers", () => {
  const out = psTable([{ ...worker, started_at: Date.now() - 125_000, last_heartbeat: Date.now() - 4_000 }]);
  const [head, row] = out.split("\n");
  assert.match(head!, /^TASK\s+PROFILE\s+PID\s+PROCS\s+CPU%\s+CPU\s+RSS\s+RUNTIME\s+HEARTBEAT\s+LOG\s+TITLE$/);
  assert.match(row!, /^t-abc123\s+coder\s+4242\s+3\s+87\.7\s+12\.3s\s+50\.3 MiB\s+2m\s+4s ago\s+2\.0 KiB\s+Fix the red build now$/);
});

test("neither the CLI nor the TUI formats a worker row itself", () => {
  for (const file of ["cli/commands/kanban.ts", "tui/views/kanban.ts"]) {
    const source = readFileSync(join(ROOT, file), "utf8");
    assert.match(source, /workerCells\(/, `${file} uses workerCells`);
    assert.not.match(source, /cpu_seconds\.toFixed|rss_bytes\)/, `${file} has its own copy of the row`);
  }
});

test.run();
