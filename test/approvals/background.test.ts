import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";

// Turns nobody can answer: a kanban worker (its loop in its own process, deciding through the
// daemon's approval service) and a cron job (a daemon turn with no client).

function victim() {
  const dir = mkdtempSync(join(tmpdir(), "appr-bg-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep me");
  return { dir, marker, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

async function home(extra = "approvals:\n  mode: smart\n") {
  const h = await chatHome({}, extra);
  const started = await h.cli(["daemon", "start"]);
  if (started.code !== 0) throw new Error(started.stderr);
  return h;
}

test("a kanban worker's dangerous command is denied by the daemon's service (non-interactive)", async () => {
  const h = await home();
  const v = victim();
  try {
    h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: v.dir } }] }, { text: "gave up" }]);
    const r = await h.chat(["-q", "clean the build"], { env: { AGENT_KANBAN_TASK: "t_1" } });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "gave up");
    assert.ok(existsSync(v.marker), "the command did not run");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /denied: dangerous command needs approval.*approvals\.non_interactive: deny/);
    // The worker's session (kind kanban) holds the denial too: the transcript went through the daemon.
    const list = JSON.parse((await h.cli(["chat", "--list", "--json"])).stdout).sessions as Array<{ id: string; kind: string }>;
    const s = list.find((x) => x.kind === "kanban")!;
    const shown = await h.cli(["sessions", "show", s.id, "--json"]);
    assert.match(shown.stdout, /approvals\.non_interactive/);
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("a kanban worker's ordinary command runs unasked in smart mode; in off mode the dangerous one runs", async () => {
  const h = await home("approvals:\n  mode: off\n");
  const v = victim();
  try {
    h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: v.dir } }] }, { text: "cleaned" }]);
    const r = await h.chat(["-q", "clean the build"], { env: { AGENT_KANBAN_TASK: "t_2" } });
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(v.marker), "mode off: it ran");
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("a cron job's dangerous command is denied (non-interactive)", async () => {
  const h = await home();
  const v = victim();
  try {
    h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: v.dir } }] }, { text: "could not clean" }]);
    const added = await h.cli(["cron", "add", "every 1h", "clean the build", "--json"]);
    assert.is(added.code, 0, added.stderr);
    const job = JSON.parse(added.stdout).job;
    const ran = await h.cli(["cron", "run", job.id, "--json"]);
    assert.is(ran.code, 0, ran.stderr);
    assert.match(JSON.parse(ran.stdout).run.output, /could not clean/);
    assert.ok(existsSync(v.marker), "the command did not run");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /denied: dangerous command needs approval.*approvals\.non_interactive: deny/);
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test.run();
