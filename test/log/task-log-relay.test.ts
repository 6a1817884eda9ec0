// Kanban worker task logs are written by the one log writer through the worker-output relay
// (daemon/log/relay-main.ts, started by shared/log-relay.ts), driven here as a user sees it (real daemon, real workers): a secret a
// worker prints does not reach its task log, a log that outgrows logs.max_bytes while the worker
// writes is rotated, and `kanban log --follow` follows it through those rotations. The relay
// process itself, fed a piece at a time: test/log/relay.test.ts.
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { dirname } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI } from "../helpers/cli.js";
import { type Behaviour, type KanbanHome, kanbanHome, waitFor } from "../kanban/dispatch-helpers.js";

const SECRET = "sk-live-7f3a9c0d2e4b6a8c1e5f";
let h: KanbanHome;

test.before(async () => {
  // The daemon knows the secret from its environment (a variable named like a secret); its workers inherit it.
  h = await kanbanHome({}, "logs:\n  max_bytes: 2048\n  keep: 2\n", { EXAMPLE_SERVICE_TOKEN: SECRET });
});

test.after(async () => {
  await h.dispose();
});

const finished = (t: { runs: Array<{ ended_at: number | null }> }) => t.runs.every((r) => r.ended_at !== null);

/** Completes the task, then answers with `text` (which the worker prints). */
const answers =
  (text: string): Behaviour =>
  (step) =>
    step === 0 ? { toolCalls: [{ name: "kanban_complete", arguments: { summary: "did it", result: "ok" } }] } : { text };

test("a secret a worker prints does not reach its task log", async () => {
  const created = await h.task("leak it", [answers(`the key is ${SECRET} and that is all END-OF-ANSWER`)]);
  const t = await h.waitTask("done with its run ended", created.id, (x) => x.status === "done" && finished(x));
  const path = t.runs[0]!.log_path!;
  let text = "";
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !(text = readFileSync(path, "utf8")).includes("END-OF-ANSWER")) await new Promise((r) => setTimeout(r, 100));
  assert.match(text, /END-OF-ANSWER/, text);
  assert.not.ok(text.includes(SECRET), text);
  assert.match(text, /the key is \[redacted\] and that is all/);
  const shown = await h.cli(["kanban", "log", created.id]);
  assert.is(shown.code, 0, shown.stderr);
  assert.not.ok(shown.stdout.includes(SECRET.slice(0, 12)), shown.stdout);
});

test("a task log that outgrows logs.max_bytes while its worker writes is rotated by size, keep files kept", async () => {
  const long = Array.from({ length: 120 }, (_, i) => `line ${String(i).padStart(3, "0")} ${"x".repeat(40)}`).join("\n");
  const created = await h.task("talk a lot", [answers(`${long}\nLAST-LINE`)]);
  const t = await h.waitTask("done with its run ended", created.id, (x) => x.status === "done" && finished(x));
  const path = t.runs[0]!.log_path!;
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline && !readFileSync(path, "utf8").includes("LAST-LINE")) await new Promise((r) => setTimeout(r, 100));
  const names = readdirSync(dirname(path)).filter((n) => n.startsWith(`${created.id}.log`));
  assert.equal(names.sort(), [`${created.id}.log`, `${created.id}.log.1`, `${created.id}.log.2`], "keep: 2 rotated files, no more");
  for (const n of names) {
    const size = readFileSync(`${dirname(path)}/${n}`).length;
    assert.ok(size <= 2048, `${n} is ${size} bytes`);
  }
  assert.match(readFileSync(path, "utf8"), /LAST-LINE/);
});

test("kanban log --follow follows a running task's log across the relay's rotations, every line once", async () => {
  // About 4.4 KB printed at once at the end of a 2 s answer: the relay rotates twice in one go (2 KB files).
  const lines = Array.from({ length: 90 }, (_, i) => `row ${String(i).padStart(3, "0")} ${"z".repeat(40)}`);
  const slowLong: Behaviour = () => ({ text: `${lines.join("\n")}\nLAST-LINE`, chunkChars: 300, chunkDelayMs: 150 });
  const created = await h.task("follow through rotations", [slowLong]);
  await h.waitTask("running with a worker", created.id, (x) => x.status === "running" && x.runs[0]?.pid != null);
  const child = spawn(process.execPath, [CLI, "kanban", "log", created.id, "--follow"], {
    env: { ...process.env, AGENT_HOME: h.home, AGENT_GATEWAY_PORT: "0", NO_COLOR: "1" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (d) => (out += d));
  child.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => child.once("close", (code) => resolve(code)));
  try {
    // The worker exits without completing: the task is blocked, and the follow ends by itself.
    const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 30_000))]);
    assert.is(code, 0, `${err}\n${out}`);
    const t = await h.show(created.id);
    assert.ok(existsRotated(t.runs[0]!.log_path!, 2), "the log rotated twice while followed");
    const shown = out.split("\n").filter((l) => l.startsWith("row "));
    assert.equal(shown, lines, "every line once, in order");
    assert.match(out, /LAST-LINE/);
  } finally {
    child.kill("SIGKILL");
  }
  await waitFor("nothing left running", async () => (await h.show(created.id)).status !== "running");
});

function existsRotated(path: string, n: number): boolean {
  try {
    readFileSync(`${path}.${n}`);
    return true;
  } catch {
    return false;
  }
}

test.run();
