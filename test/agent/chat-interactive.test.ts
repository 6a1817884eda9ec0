import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, waitFor } from "./helpers.js";

function filesContaining(dir: string, needle: string, skip: string[]): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (skip.includes(name)) continue;
    if (statSync(path).isDirectory()) out.push(...filesContaining(path, needle, skip));
    else if (readFileSync(path, "utf8").includes(needle)) out.push(path);
  }
  return out;
}

test("an unknown slash command (/prompt) prints a hint and the CLI keeps running", async () => {
  const h = await chatHome({ script: [{ text: "still here" }] });
  try {
    const r = await h.chat([], { input: "/prompt\n/exit --bogus\n/help\nhello\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /unknown command \/prompt/);
    assert.match(r.stdout, /\/exit does not take --bogus/);
    assert.match(r.stdout, /\/exit, \/quit \[--delete\|-d\]/);
    assert.match(r.stdout, /still here/);
  } finally {
    await h.dispose();
  }
});

test("/exit --delete removes the session and its transcripts", async () => {
  const h = await chatHome({ script: [{ text: "noted" }] });
  try {
    const marker = "marker-7f3a9c-unique";
    const r = await h.chat([], { input: `remember ${marker}\n/exit --delete\n` });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /deleted session s_/);
    const list = await h.chat(["--list", "--json"]);
    assert.equal(JSON.parse(list.stdout), { sessions: [] });
    assert.equal(filesContaining(h.home, marker, ["logs", "daemon.sock"]), []);
  } finally {
    await h.dispose();
  }
});

test("a session survives a daemon restart and can be resumed", async () => {
  const h = await chatHome({ script: [{ text: "the answer is 42" }, { text: "you asked about 42" }] });
  try {
    const first = await h.chat(["-q", "what is the answer?", "--json"]);
    assert.is(first.code, 0, first.stderr);
    const { session_id: sessionId } = JSON.parse(first.stdout);
    assert.is((await h.cli(["daemon", "stop"])).code, 0);
    const again = await h.chat(["--resume", sessionId, "-q", "what did I ask?"]);
    assert.is(again.code, 0, again.stderr);
    assert.is(again.stdout.trim(), "you asked about 42");
    const sent = h.fake.requests[1]!.body.messages.map((m: { role: string; content: string }) => `${m.role}:${m.content}`);
    assert.ok(sent.includes("user:what is the answer?"));
    assert.ok(sent.includes("assistant:the answer is 42"));
    assert.is(sent[sent.length - 1], "user:what did I ask?");
  } finally {
    await h.dispose();
  }
});

test("an interrupted turn leaves a consistent transcript", async () => {
  const markerDir = mkdtempSync(join(tmpdir(), "ai-"));
  const marker = join(markerDir, "terminal.started");
  const h = await chatHome({
    script: [
      {
        toolCalls: [
          { name: "terminal", arguments: { command: `touch ${marker}; sleep 5` } },
          { name: "list_files", arguments: {} },
        ],
      },
      { text: "later" },
    ],
  });
  try {
    const child = h.spawnChat(["-q", "run something slow"]);
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    await waitFor("the first model call", () => h.fake.requests.length === 1, 10_000);
    await waitFor("the terminal tool's command to start", () => existsSync(marker), 10_000);
    child.kill("SIGINT");
    assert.is(await exited, 130, stderr);
    const client = await connectDaemon({ home: h.home });
    try {
      const [session] = (await client.call("chat.sessions.list", {})).sessions;
      const { messages } = await client.call("chat.sessions.get", { sessionId: session!.id });
      const calls = messages.flatMap((m) => m.tool_calls ?? []).map((c) => c.id);
      const results = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      assert.is(calls.length, 2);
      assert.equal(results.sort(), calls.sort(), "every tool call has a result");
      assert.is(session!.active, false);
    } finally {
      client.close();
    }
    // The next turn goes through: the provider accepts the history.
    const next = await h.chat(["--resume", (JSON.parse((await h.chat(["--list", "--json"])).stdout).sessions as Array<{ id: string }>)[0]!.id, "-q", "go on"]);
    assert.is(next.code, 0, next.stderr);
    assert.is(next.stdout.trim(), "later");
  } finally {
    await h.dispose();
    rmSync(markerDir, { recursive: true, force: true });
  }
});

test.run();
