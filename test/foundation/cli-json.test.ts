// The CLI's one JSON convention (docs/cli.md): every command that takes --json prints one
// object with named fields, whose keys are snake_case all the way down (user data excepted: an
// actor's state, a config value, an event's payload...). Runs every --json command of every
// group, as a user would, against a real daemon on a temp home with some data in it.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startFakeModel, type FakeModel } from "../fixtures/fake-model-server.js";
import { CLI, runCli, tempHome, type CliResult } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";
import { EVERYTHING } from "../mcp/helpers.js";
import { USER_DATA_KEYS } from "../../shared/json-keys.js";

/** Keys whose values are user data, printed as they are. */
const USER_DATA = USER_DATA_KEYS;
/** Maps keyed by names chosen elsewhere: profiles (by the user), Debian packages (computer-use's driver). */
const USER_KEYED = new Set(["by_assignee", "packages"]);
const SNAKE = /^[a-z0-9]+(_[a-z0-9]+)*$/;

/** Every key (with its path) that is not snake_case. */
function badKeys(value: unknown, path = "$"): string[] {
  if (Array.isArray(value)) return value.flatMap((v, i) => badKeys(v, `${path}[${i}]`));
  if (value === null || typeof value !== "object") return [];
  return Object.entries(value).flatMap(([k, v]) => [
    ...(SNAKE.test(k) ? [] : [`${path}.${k}`]),
    ...(USER_DATA.has(k) ? [] : USER_KEYED.has(k) ? [] : badKeys(v, `${path}.${k}`)),
  ]);
}

let fake: FakeModel;
let home: string;
let cleanup: () => void;
const env = { AGENT_GATEWAY_PORT: "0", HOME: "" };
const covered = new Set<string>();

test.before(async () => {
  fake = await startFakeModel({
    respond(req) {
      const messages: any[] = req.body?.messages ?? [];
      const first = typeof messages[0]?.content === "string" ? messages[0].content : "";
      if (first.startsWith("You plan work on a kanban board")) return { text: '{"fanout": false, "title": "Split me", "body": "one step"}' };
      const last = messages[messages.length - 1];
      // A chat turn: one tool call, then the answer.
      if (last?.role === "user" && String(last.content).includes("read the notes"))
        return { toolCalls: [{ name: "read_file", arguments: { path: join(home, "notes.txt") } }] };
      return { text: "All done." };
    },
  });
  ({ home, cleanup } = tempHome("cj"));
  env.HOME = join(home, "userhome");
  mkdirSync(env.HOME);
  writeFileSync(join(home, "notes.txt"), "some notes\n");
  writeFileSync(
    join(home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: ${fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\nkanban:\n  max_in_progress: 0\n  auto_decompose: false\n`,
  );
});

test.after(async () => {
  await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
  await fake.close();
  cleanup();
});

async function cli(args: string[], code = 0): Promise<CliResult> {
  const r = await runCli(args, { home, env, timeoutMs: 60_000 });
  assert.is(r.code, code, `agent ${args.join(" ")}: exit ${r.code}\n${r.stderr}${r.stdout}`);
  return r;
}

/** `agent <args> --json`: exits `code`, prints one JSON object with snake_case keys; returns it. */
async function json(args: string[], code = 0): Promise<any> {
  const r = await cli([...args, "--json"], code);
  covered.add(args[0]!);
  let value: unknown;
  try {
    value = JSON.parse(r.stdout);
  } catch {
    assert.unreachable(`agent ${args.join(" ")} --json did not print one JSON value:\n${r.stdout}`);
  }
  assert.ok(
    value !== null && typeof value === "object" && !Array.isArray(value),
    `agent ${args.join(" ")} --json printed ${r.stdout.slice(0, 200)}, not an object`,
  );
  assert.equal(badKeys(value), [], `agent ${args.join(" ")} --json has keys that are not snake_case`);
  return value;
}

test("daemon, config and logs", async () => {
  await json(["--version"]);
  await json(["daemon", "status"], 3);
  await json(["daemon", "start"]);
  const status = await json(["daemon", "status"]);
  assert.type(status.uptime_ms, "number");
  assert.type(status.protocol_version, "number");
  await json(["daemon", "reload"]);
  await json(["daemon", "install", "--print"]);
  await json(["config", "path"]);
  await json(["config", "get", "logs.level"]);
  await json(["config", "get"]);
  await json(["config", "set", "logs.keep", "4"]);
  await json(["config", "migrate"]);
  assert.ok((await json(["logs", "--list"])).components.length > 0);
  assert.ok(Array.isArray((await json(["logs", "--lines", "3"])).records));
  await json(["daemon", "logs", "--lines", "1"]);
});

test("chat and sessions", async () => {
  const turn = await json(["chat", "-q", "read the notes"]);
  assert.type(turn.session_id, "string");
  const listed = await json(["chat", "--list"]);
  assert.is(listed.sessions[0].id, turn.session_id);
  const sessions = await json(["sessions", "list"]);
  assert.is(sessions.sessions[0].id, turn.session_id);
  assert.type(sessions.sessions[0].message_count, "number");
  await json(["sessions", "list", "--all-profiles"]);
  const shown = await json(["sessions", "show", turn.session_id]);
  assert.ok(shown.messages.some((m: any) => m.tool_calls?.[0]?.function?.name === "read_file"));
  assert.ok(Array.isArray((await json(["sessions", "search", "notes"])).results));
  await json(["sessions", "export", turn.session_id]);
  await json(["sessions", "export", turn.session_id, "--format", "json"]);
  await json(["sessions", "export", turn.session_id, "-o", join(home, "s.md")]);
  await json(["sessions", "reindex"]);
  const other = await json(["chat", "-q", "hello"]);
  await json(["sessions", "delete", other.session_id]);
});

test("actors", async () => {
  await json(["actors", "new", "counter"]);
  const created = await json(["actors", "create", "counter", "--key", "k1", "--input", '{"start": 2}']);
  await json(["actors", "list"]);
  await json(["actors", "get", created.actor_id]);
  await json(["actors", "call", created.actor_id, "increment", "3"]);
  await json(["actors", "call", created.actor_id, "reset"]);
  await json(["actors", "state", created.actor_id]);
  await json(["actors", "logs", created.actor_id]);
  await json(["actors", "destroy", created.actor_id]);
});

test("profiles, bundles and memory", async () => {
  await json(["profile", "create", "writer", "--no-alias", "--description", "writes"]);
  await json(["profile", "list"]);
  await json(["profile", "show"]);
  await json(["profile", "info", "writer"]);
  await json(["profile", "describe", "writer", "--text", "writes things"]);
  await json(["profile", "rename", "writer", "author"]);
  await json(["profile", "use", "author"]);
  await json(["profile", "use", "default"]);
  await json(["profile", "delete", "author", "-y"]);
  await json(["bundles", "create", "Web review", "--skill", "code-review", "--description", "d"]);
  await json(["bundles", "list"]);
  await json(["bundles", "show", "web-review"]);
  await json(["bundles", "reload"]);
  await json(["bundles", "delete", "web-review"]);
  await json(["memory", "setup"]);
  await json(["memory", "status"]);
  await json(["memory", "off"]);
});

test("cron and lsp", async () => {
  const added = await json(["cron", "add", "every 1d", "say hi", "--name", "greet", "--paused"]);
  const id = added.job.id;
  await json(["cron", "list"]);
  await json(["cron", "edit", id, "--prompt", "say hello"]);
  await json(["cron", "resume", id]);
  await json(["cron", "pause", id]);
  await json(["cron", "run", id]);
  await json(["cron", "logs", id]);
  await json(["cron", "remove", id]);
  await json(["lsp", "status"]);
  await json(["lsp", "list"]);
  await json(["lsp", "which", join(home, "a.ts")]);
  await json(["lsp", "restart"]);
});

test("channels", async () => {
  const list = await json(["channels", "list"]);
  assert.equal(list.channels, [], "no platform configured");
  await json(["channels", "status"]);
});

test("mcp", async () => {
  // `--json` goes before `--`: what follows `--` is the server's command line.
  const added = await cli(["mcp", "add", "everything", "--json", "--", process.execPath, EVERYTHING, "stdio"]);
  covered.add("mcp");
  assert.is(JSON.parse(added.stdout).server, "everything");
  const list = await json(["mcp", "list"]);
  assert.ok(
    list.servers.some((s: { name: string }) => s.name === "everything"),
    JSON.stringify(list),
  );
  await json(["mcp", "tools", "everything"]);
  await json(["mcp", "test", "everything"]);
  await json(["mcp", "restart", "everything"]);
  await json(["mcp", "remove", "everything"]);
});

test("auth and proxy", async () => {
  await json(["auth", "status"]);
  await json(["auth", "logout", "nobody"]);
  const started = await json(["proxy", "start", "--port", "0"]);
  assert.is(started.running, true);
  await json(["proxy", "status"]);
  await json(["proxy", "providers"]);
  await json(["proxy", "stop"]);
});

test("dashboard", async () => {
  const open = await json(["dashboard", "--no-open"]);
  assert.match(open.sign_in_url, /\/dashboard\/\?code=/);
  assert.type(open.token_required, "boolean");
});

test("kanban", async () => {
  const watch = spawn(process.execPath, [CLI, "kanban", "watch", "--json"], {
    env: { ...process.env, ...env, AGENT_HOME: home },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let watched = "";
  watch.stdout.on("data", (d) => (watched += d));
  try {
    // The watch is open once it shows a task created after it started.
    await waitFor(
      () => `the watch to show a created task: ${watched}`,
      async () => (await json(["kanban", "create", "Probe", "--triage"]), watched.includes('"created"')),
    );
    const a = (await json(["kanban", "create", "First"])).task.id;
    const b = (await json(["kanban", "create", "Second", "--triage"])).task.id;
    await json(["kanban", "list"]);
    await json(["kanban", "show", a]);
    await json(["kanban", "assign", a, "default"]);
    await json(["kanban", "link", a, b]);
    await json(["kanban", "unlink", a, b]);
    await json(["kanban", "comment", a, "a note"]);
    await json(["kanban", "block", a, "waiting"]);
    await json(["kanban", "unblock", a]);
    await json(["kanban", "schedule", a, "later"]);
    await json(["kanban", "promote", b]);
    await json(["kanban", "block", b]);
    const c = (await json(["kanban", "create", "Third", "--triage"])).task.id;
    await json(["kanban", "decompose", c]);
    await json(["kanban", "dispatch", "--dry-run"]);
    await json(["kanban", "runs", a]);
    await json(["kanban", "log", a]);
    await json(["kanban", "stats"]);
    await json(["kanban", "complete", a, "--summary", "did it"]);
    await json(["kanban", "archive", a]);
    await json(["kanban", "boards", "create", "side"]);
    await json(["kanban", "boards", "use", "side"]);
    await json(["kanban", "boards", "use", "default"]);
    await json(["kanban", "boards", "list"]);
    // The watch prints one object a line.
    for (const line of watched.trim().split("\n")) {
      const event = JSON.parse(line);
      assert.ok(event && typeof event === "object" && !Array.isArray(event), line);
      assert.equal(badKeys(event), [], line);
    }
    covered.add("kanban");
  } finally {
    watch.kill("SIGINT");
  }
});

test("backup and import", async () => {
  const dir = mkdtempSync(join(tmpdir(), "cj-b-"));
  try {
    const made = await json(["backup", "--quick", "-o", join(dir, "b.tar.gz")]);
    assert.type(made, "object");
    await cli(["daemon", "stop"]);
    const target = join(dir, "restored");
    const r = await runCli(["import", join(dir, "b.tar.gz"), "-y", "--json"], { home: target, env, timeoutMs: 60_000 });
    assert.is(r.code, 0, r.stderr);
    const restored = JSON.parse(r.stdout);
    assert.equal(badKeys(restored), []);
    covered.add("import");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("approvals and setup", async () => {
  assert.type((await json(["approvals", "list"])).approvals, "object");
  assert.type(await json(["approvals", "pending"]), "object");
  const set = await json(["setup", "--provider", "custom", "--base-url", fake.baseUrl, "--model", "fake-model", "--no-test", "-y"]);
  assert.is(set.provider, "custom");
});

test("api-server", async () => {
  const status = await json(["api-server", "status"]);
  assert.is(status.running, false);
  assert.equal(status.models[0], { id: "agent", profile: "default" });
  const started = await json(["api-server", "start", "--port", "0"]);
  assert.is(started.running, true);
  assert.is(started.started_by, "cli");
  const stopped = await json(["api-server", "stop"]);
  assert.is(stopped.stopped, true);
});

test("tools and coder-runtime", async () => {
  const tools = await json(["tools", "list"]);
  assert.ok(tools.tools.some((t: { name: string; available: boolean }) => t.name === "read_file" && t.available));
  const coder = await json(["coder-runtime", "status"]);
  assert.is(coder.mode, "default");
  assert.type(coder.pinned, "string");
});

test("computer-use status", async () => {
  const status = await json(["computer-use", "status"]);
  assert.is(status.enabled, false);
  assert.type(status.driver.version, "string");
  assert.type(status.missing, "object");
});

test("debug share (and update, checked in test/update/)", async () => {
  const shared = await json(["debug", "share"]);
  assert.match(shared.path, /debug-[^/]+\.json$/);
  assert.equal(shared.problems, []);
  // `agent update` needs an install of its own (a clone with an origin, or a registry): its
  // --json output is checked, snake_case keys included, by test/update/.
  covered.add("update");
});

test("every command group was covered", async () => {
  const help = await cli(["--help"]);
  const groups = [
    ...help.stdout
      .split("Commands")[1]!
      .split("Options")[0]!
      .matchAll(/^ {4}([a-z][a-z-]*) /gm),
  ].map((m) => m[1]!);
  assert.ok(groups.length > 10, help.stdout);
  assert.equal(
    groups.filter((g) => !covered.has(g)),
    [],
    "groups whose --json output this test does not check",
  );
});

test.run();
