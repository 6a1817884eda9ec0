// The CLI's conventions (docs/cli.md) as a user meets them: usage mistakes exit 2 in every group
// and name the closest command, subcommand or flag; `agent help <command>`; and the smaller
// fixes of the same pass (config path, tool call arguments in sessions show, an actor action
// that throws). The built CLI against a real daemon on a temp home.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { startFakeModel, type FakeModel } from "../fixtures/fake-model-server.js";
import { runCli, tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

let fake: FakeModel;
let home: string;
let cleanup: () => void;
const env = { AGENT_GATEWAY_PORT: "0", HOME: "" };
const cli = (args: string[]) => runCli(args, { home, env, timeoutMs: 60_000 });

test.before(async () => {
  fake = await startFakeModel({ script: [] });
  ({ home, cleanup } = tempHome("cc"));
  env.HOME = join(home, "userhome");
  mkdirSync(env.HOME);
  writeFileSync(join(home, "config.yaml"), `_config_version: 13\nmodel:\n  base_url: ${fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\n`);
});

test.after(async () => {
  await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
  await fake.close();
  cleanup();
});

test("an unknown subcommand exits 2 in every group and names the closest one", async () => {
  for (const [args, meant] of [
    [["kanban", "lsit"], "list"],
    [["sessions", "shwo"], "show"],
    [["actors", "cal"], "call"],
    [["cron", "lsit"], "list"],
    [["config", "gt"], "get"],
    [["daemon", "stauts"], "status"],
    [["profile", "creat"], "create"],
    [["bundles", "relaod"], "reload"],
    [["lsp", "whihc"], "which"],
    [["memory", "stat"], "status"],
  ] as const) {
    const r = await cli([...args]);
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, `did you mean "${meant}"`, args.join(" "));
    assert.is(r.stdout, "", args.join(" "));
  }
  // Far from every subcommand: no guess, still exit 2 with the list.
  const far = await cli(["kanban", "zzzzzz"]);
  assert.is(far.code, 2);
  assert.not.match(far.stderr, "did you mean");
  assert.match(far.stderr, /subcommands: create, list/);
  // Nothing was started for a usage mistake.
  assert.is((await cli(["daemon", "status"])).code, 3);
});

test("an unknown command and an unknown flag exit 2 and name the closest", async () => {
  const group = await cli(["kanbna", "list"]);
  assert.is(group.code, 2);
  assert.match(group.stderr, 'did you mean "kanban"');
  for (const [args, meant] of [
    [["kanban", "list", "--stauts", "ready"], "--status"],
    [["sessions", "list", "--lmit", "3"], "--limit"],
    [["logs", "--folow"], "--follow"],
    [["cron", "list", "--jsno"], "--json"],
  ] as const) {
    const r = await cli([...args]);
    assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, `did you mean "${meant}"`, args.join(" "));
  }
  const json = await cli(["kanban", "lsit", "--json"]);
  assert.is(json.code, 2);
  assert.is(JSON.parse(json.stderr).error.code, "usage.unknown_command");
});

test("agent help <command> prints the command's help, as agent <command> --help does", async () => {
  const help = await cli(["help", "kanban"]);
  assert.is(help.code, 0, help.stderr);
  assert.match(help.stdout, "agent kanban <create|list");
  assert.is(help.stdout, (await cli(["kanban", "--help"])).stdout);
  const main = await cli(["help"]);
  assert.is(main.code, 0);
  assert.match(main.stdout, "Commands");
  const unknown = await cli(["help", "kanbn"]);
  assert.is(unknown.code, 2);
  assert.match(unknown.stderr, 'did you mean "kanban"');
});

test("config path shows both files", async () => {
  const r = await cli(["config", "path"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, join(home, "config.yaml"));
  assert.match(r.stdout, join(home, ".env"));
});

test("sessions show prints tool call arguments, escape-stripped and cut", async () => {
  const long = "x".repeat(1000);
  fake.setScript([
    { toolCalls: [{ name: "read_file", arguments: { path: `${join(home, "nothing-here")}\u001b[31m-red`, note: long } }] },
    { text: "No such file." },
  ]);
  const turn = await cli(["chat", "-q", "look", "--json"]);
  assert.is(turn.code, 0, turn.stderr);
  const id = JSON.parse(turn.stdout).session_id;
  const r = await cli(["sessions", "show", id]);
  assert.is(r.code, 0, r.stderr);
  const line = r.stdout.split("\n").find((l) => l.includes("read_file"));
  assert.ok(line, r.stdout);
  assert.match(line!, join(home, "nothing-here"));
  assert.not.match(r.stdout, "\u001b");
  assert.match(line!, /… \(\d+ more characters\)/);
  assert.ok(line!.length < 500, `${line!.length} characters`);
});

test("actors call on an action that throws shows the actor's message and where its stack is", async () => {
  const dir = join(home, "actors");
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, "thrower.mjs"),
    `export const thrower = { createState: () => ({}), actions: { explode: () => { throw new Error("the flux capacitor melted"); } } };\n`,
  );
  const created = await waitFor(
    "the thrower module to load",
    async () => {
      const r = await cli(["actors", "create", "thrower", "--key", "a", "--json"]);
      return r.code === 0 ? JSON.parse(r.stdout) : null;
    },
    20_000,
  );
  const r = await cli(["actors", "call", created.actor_id, "explode"]);
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, "the flux capacitor melted");
  assert.match(r.stderr, "agent logs --component actors");
  assert.not.match(r.stderr, "internal error");
  // The hint is right: the stack is there.
  const log = await cli(["logs", "--component", "actors", "--json"]);
  assert.ok(
    JSON.parse(log.stdout).records.some((rec: { msg: string; error?: { stack?: string } }) => rec.error?.stack?.includes("the flux capacitor melted")),
    log.stdout.slice(-2000),
  );
});

test.run();
