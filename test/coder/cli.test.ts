import { chmodSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, waitFor } from "../agent/helpers.js";

/**
 * The coder runtime through the CLI and a real daemon, with the fake app-server: status, the
 * refusals with the install hint, a `chat -q` turn chosen by config, and the non-interactive rule
 * (denied, unless coder_runtime.auto_approve).
 */
const FIXTURE = fileURLToPath(new URL("../fixtures/fake-app-server.mjs", import.meta.url));
const bin = mkdtempSync(join(tmpdir(), "coder-bin-"));
const OLD = join(bin, "old-codex");
writeFileSync(OLD, `#!/bin/sh\nFAKE_CODEX_VERSION=0.124.9 exec ${process.execPath} ${FIXTURE} "$@"\n`);
chmodSync(OLD, 0o755);

let h: Awaited<ReturnType<typeof chatHome>>;

async function configure(coder: string): Promise<void> {
  const base = `_config_version: 13\nmodel:\n  base_url: ${h.fake.baseUrl}\n  name: fake-model\n  api_mode: responses\n`;
  writeFileSync(join(h.home, "config.yaml"), `${base}${coder}approvals:\n  mode: ask\n`);
  const r = await h.cli(["daemon", "reload"]);
  assert.is(r.code, 0, r.stderr);
}

test.before(async () => {
  h = await chatHome();
  await h.cli(["daemon", "start"]);
});

test.after(async () => {
  await h.dispose();
  rmSync(bin, { recursive: true, force: true });
});

test("no binary: status says so, enabling is refused with the install hint", async () => {
  await configure(`coder_runtime:\n  command: ${join(bin, "missing")}\n`);
  const s = await h.cli(["coder-runtime", "status"]);
  assert.is(s.code, 0, s.stderr);
  assert.match(s.stdout, /coder runtime: off/);
  assert.match(s.stdout, /binary: not found/);
  const on = await h.chat(["-q", "/coder-runtime on"]);
  assert.is.not(on.code, 0);
  assert.match(on.stderr, /is not an executable file; install it with `agent coder-runtime install`/);
});

test("a binary older than 0.125 is refused", async () => {
  await configure(`coder_runtime:\n  command: ${OLD}\n`);
  const on = await h.chat(["-q", "/coder-runtime on"]);
  assert.is.not(on.code, 0);
  assert.match(on.stderr, /is codex 0\.124\.9; the coder runtime needs 0\.125\.0 or newer/);
});

test("config selects the runtime: a chat -q turn goes to the app-server; a command is denied with nobody to ask", async () => {
  await configure(`  vendor_runtime: coder_app_server\ncoder_runtime:\n  command: ${FIXTURE}\n`);
  const s = await h.cli(["coder-runtime", "status", "--json"]);
  const status = JSON.parse(s.stdout);
  assert.is(status.mode, "coder_app_server");
  assert.is(status.version, "0.169.0");
  const r = await h.chat(["-q", "text please"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), "hello from the fake");
  const denied = await h.chat(["-q", "command run"]);
  assert.is(denied.code, 0, denied.stderr);
  assert.is(denied.stdout.trim(), "decision: decline");
  assert.is(h.fake.requests.length, 0, "the agent's own model was not called");
  // The app-server was asked for its plugins (plugin/list); the status shows them.
  const after = await h.cli(["coder-runtime", "status"]);
  assert.match(after.stdout, /plugins \(plugin\/list\): lint-helper/);
});

test("a kanban worker (AGENT_KANBAN_TASK) whose profile selects the runtime runs its turn on the app-server, non-interactive", async () => {
  await configure(`  vendor_runtime: coder_app_server\ncoder_runtime:\n  command: ${FIXTURE}\n`);
  const r = await h.chat(["-q", "text please"], { env: { AGENT_KANBAN_TASK: "t_coder" } });
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), "hello from the fake");
  const denied = await h.chat(["-q", "command run"], { env: { AGENT_KANBAN_TASK: "t_coder" } });
  assert.is(denied.code, 0, denied.stderr);
  assert.is(denied.stdout.trim(), "decision: decline", "nobody to ask: declined");
  assert.is(h.fake.requests.length, 0, "the agent's own model was not called");
});

test("coder_runtime.auto_approve: accepted where nobody can answer", async () => {
  await configure(`  vendor_runtime: coder_app_server\ncoder_runtime:\n  command: ${FIXTURE}\n  auto_approve: true\n`);
  const r = await h.chat(["-q", "command run"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), "decision: accept");
});

test("an interrupt (Ctrl-C, chat.interrupt) sends turn/interrupt: the turn ends interrupted with what it had", async () => {
  const client = await connectDaemon({ home: h.home, autostart: false });
  try {
    const { session } = await client.call("chat.sessions.create", {});
    const sent = client.call("chat.send", { sessionId: session.id, prompt: "interrupt me" });
    await waitFor("the first completed item in the transcript", async () => {
      const got = await client.call("chat.sessions.get", { sessionId: session.id });
      return got.messages.some((m) => m.content === "working");
    });
    const r = await client.call("chat.interrupt", { sessionId: session.id });
    assert.ok(r.interrupted);
    const result = await sent;
    assert.is(result.stopReason, "interrupted");
    assert.is(result.answer, "working");
  } finally {
    client.close();
  }
});

test("a crash mid-turn: the partial result and the hint to switch back", async () => {
  const r = await h.chat(["-q", "crash now"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /partial/);
  assert.match(r.stdout + r.stderr, /\/coder-runtime auto/);
});

test.run();
