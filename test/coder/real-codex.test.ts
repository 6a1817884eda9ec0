import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { BLOCK_BEGIN, BLOCK_END } from "../../daemon/coder/managed-config.js";
import { startFakeResponses, type FakeResponses } from "../fixtures/fake-responses-server.js";
import { CLI, ROOT, runCli, tempHome, waitFor } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { stopServer, type Tmux as TmuxT } from "../tui/tmux.js";

/**
 * The real `@openai/codex` 0.169.0 app-server, end to end: the daemon hands turns to it, and it
 * talks to a fake Responses API upstream on loopback. CI installs the binary in .tools/codex
 * (.ci/run); without it these report themselves skipped.
 */
const CODEX = join(ROOT, ".tools", "codex", "node_modules", ".bin", "codex");
const noCodex = existsSync(CODEX) ? null : `the codex binary is not installed at ${CODEX} (.ci/run installs @openai/codex@0.169.0 there)`;
const noTmux = missingCommand("tmux", ["-V"]);
const withCodex = testUnless(noCodex);
const withCodexAndTmux = testUnless(noCodex ?? noTmux);

let fake: FakeResponses;
let home: string;
let cleanup: () => void;
let work: string;
const env = { AGENT_GATEWAY_PORT: "0" };
const open: TmuxT[] = [];

function writeConfig(selected: boolean): void {
  writeFileSync(
    join(home, "config.yaml"),
    [
      "_config_version: 13",
      "model:",
      `  base_url: ${fake.url}`,
      "  name: m1",
      "  api_mode: responses",
      ...(selected ? ["  vendor_runtime: coder_app_server"] : []),
      "coder_runtime:",
      `  command: ${CODEX}`,
      "approvals:",
      "  mode: ask",
      "  timeout: 60",
      "",
    ].join("\n"),
  );
}

test.before(async () => {
  if (noCodex) return;
  fake = await startFakeResponses();
  ({ home, cleanup } = tempHome("cx"));
  work = join(home, "work");
  mkdirSync(work);
  writeConfig(true);
});

test.after(async () => {
  if (noCodex) return;
  for (const t of open) t.kill();
  if (open.length) stopServer();
  await runCli(["daemon", "stop"], { home }).catch(() => undefined);
  await fake.close();
  cleanup();
});

withCodex("a text turn through codex app-server; the session holds the completed items", async () => {
  fake.push({ text: "hello through codex about the zebrafish" });
  const r = await runCli(["chat", "-q", "tell me about the zebrafish", "--json"], { home, env, timeoutMs: 60_000 });
  assert.is(r.code, 0, r.stderr);
  const out = JSON.parse(r.stdout);
  assert.is(out.answer, "hello through codex about the zebrafish");
  const show = await runCli(["sessions", "show", out.session_id, "--json"], { home, env });
  assert.is(show.code, 0, show.stderr);
  const messages = JSON.parse(show.stdout).messages as Array<{ role: string; content: string }>;
  assert.equal(
    messages.map((m) => [m.role, m.content]),
    [
      ["user", "tell me about the zebrafish"],
      ["assistant", "hello through codex about the zebrafish"],
    ],
  );
});

withCodex("our own tool server answers a session_search call made by codex", async () => {
  fake.push({ call: { name: "session_search", namespace: "mcp__agent", arguments: { query: "zebrafish" } } }, { text: "found it" });
  const before = fake.requests.length;
  const r = await runCli(["chat", "-q", "search my sessions", "--json"], { home, env, timeoutMs: 90_000 });
  assert.is(r.code, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).answer, "found it");
  const followUp = fake.requests[before + 1]!;
  const output = followUp.input.find((i: any) => i.type === "function_call_output") as any;
  assert.ok(output, `codex sent the tool's output back: ${JSON.stringify(followUp.input).slice(-2000)}`);
  assert.match(JSON.stringify(output.output), /zebrafish/, "the earlier session was found");
  const show = await runCli(["sessions", "show", JSON.parse(r.stdout).session_id, "--json"], { home, env });
  const messages = JSON.parse(show.stdout).messages as Array<{ role: string; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>;
  const call = messages.find((m) => m.tool_calls)?.tool_calls?.[0];
  assert.is(call?.function.name, "mcp_agent_session_search");
  assert.is(call?.function.arguments, '{"query":"zebrafish"}');
});

withCodexAndTmux("line-mode chat: /coder-runtime on, a command approved with y runs, one declined with n does not", async () => {
  const { Tmux } = await import("../tui/tmux.js");
  writeConfig(false);
  await runCli(["daemon", "reload"], { home, env });
  fake.push(
    { call: { name: "exec_command", arguments: { cmd: "touch approved.txt" } } },
    { text: "finished one" },
    { call: { name: "exec_command", arguments: { cmd: "touch declined.txt" } } },
    { text: "finished two" },
  );
  try {
    const t = new Tmux(`cd '${work}' && env AGENT_HOME='${home}' AGENT_GATEWAY_PORT=0 NO_COLOR=1 ${process.execPath} ${CLI} chat`);
    open.push(t);
    await t.waitFor(/agent chat ·/, 30_000);
    t.type("/coder-runtime on");
    t.press("Enter");
    await t.waitFor(/coder runtime: on/, 30_000);
    t.type("make the first file");
    t.press("Enter");
    await t.waitFor(/approval needed[\s\S]*touch approved\.txt[\s\S]*\[o\]nce/, 60_000);
    t.type("y");
    t.press("Enter");
    await t.waitFor(/finished one/, 60_000);
    // codex's exec_command answers the model after its yield time even when the process is still
    // starting (a loaded machine): the file comes when the approved command has run.
    await waitFor("approved: it ran", () => existsSync(join(work, "approved.txt")), 30_000);
    t.type("make the second file");
    t.press("Enter");
    await t.waitFor(/approval needed[\s\S]*touch declined\.txt[\s\S]*\[o\]nce/, 60_000);
    t.type("n");
    t.press("Enter");
    await t.waitFor(/finished two/, 60_000);
    assert.not.ok(existsSync(join(work, "declined.txt")), "declined: it did not run");
  } finally {
    // The next tests use the coder runtime again, whatever happened here.
    writeConfig(true);
    await runCli(["daemon", "reload"], { home, env });
  }
});

withCodex("the managed block, written twice: user content around it unchanged", async () => {
  const path = join(home, "coder", "codex-home", "config.toml");
  await waitFor("the managed block written at enable", () => existsSync(path));
  const first = readFileSync(path, "utf8");
  assert.ok(first.includes(BLOCK_BEGIN) && first.includes(BLOCK_END));
  const userTop = "# my own note, kept as it is\n";
  const userTail = '\n[profiles.mine]   # spacing kept\nmodel = "x"\n';
  writeFileSync(path, `${userTop}${first}${userTail}`);
  const on = await runCli(["chat", "-q", "/coder-runtime on"], { home, env, timeoutMs: 30_000 });
  assert.is(on.code, 0, on.stderr);
  assert.match(on.stdout, /managed block written to/);
  const second = readFileSync(path, "utf8");
  assert.ok(second.startsWith(`${userTop}${BLOCK_BEGIN}\n`), second);
  assert.ok(second.endsWith(userTail), second);
  assert.equal(second.split(BLOCK_BEGIN).length, 2);
  // And codex still reads it: a turn works.
  fake.push({ text: "still fine" });
  const r = await runCli(["chat", "-q", "again"], { home, env, timeoutMs: 60_000 });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), "still fine");
  rmSync(join(work, "approved.txt"), { force: true });
});

test.run();
