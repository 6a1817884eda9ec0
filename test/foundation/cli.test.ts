import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT, runCli, tempHome } from "../helpers/cli.js";

const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };

test("agent --version prints the package version", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["--version"], { home });
    assert.is(r.code, 0);
    assert.is(r.stdout, `${pkg.version}\n`);
    assert.equal(JSON.parse((await runCli(["--version", "--json"], { home })).stdout), { version: pkg.version });
  } finally {
    cleanup();
  }
});

test("agent --help lists the command groups", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["--help"], { home });
    assert.is(r.code, 0);
    for (const group of ["daemon", "config", "logs"]) assert.match(r.stdout, new RegExp(`\\n    ${group}\\s+\\S`));
    const sub = await runCli(["config", "--help"], { home });
    assert.is(sub.code, 0);
    assert.match(sub.stdout, /agent config <get\|set\|path\|migrate>/);
  } finally {
    cleanup();
  }
});

test("an unknown command or flag is a usage error (exit 2) without a stack trace, and --debug shows one", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["frobnicate"], { home });
    assert.is(r.code, 2);
    assert.match(r.stderr, /unknown command "frobnicate"/);
    assert.not.match(r.stderr, /\n\s+at /);
    const flag = await runCli(["daemon", "status", "--bogus"], { home });
    assert.is(flag.code, 2);
    assert.match(flag.stderr, /unknown option --bogus/);
    const debug = await runCli(["frobnicate", "--debug"], { home });
    assert.match(debug.stderr, /\n\s+at /);
    const json = await runCli(["frobnicate", "--json"], { home });
    assert.is(JSON.parse(json.stderr).error.code, "usage.unknown_command");
  } finally {
    cleanup();
  }
});

test("--json output parses for every command that prints data", async () => {
  const { home, cleanup } = tempHome();
  mkdirSync(join(home, "fakehome"));
  const env = { HOME: join(home, "fakehome"), XDG_CONFIG_HOME: "", PATH: "/nonexistent" };
  writeFileSync(join(home, "config.yaml"), "_config_version: 13\n");
  const commands = [
    ["--version"],
    ["daemon", "status"],
    ["daemon", "start"],
    ["daemon", "status"],
    ["daemon", "restart"],
    ["config", "path"],
    ["config", "get", "logs.level"],
    ["config", "get"],
    ["config", "set", "logs.keep", "4"],
    ["config", "migrate"],
    ["logs"],
    ["logs", "--list"],
    ["daemon", "logs", "--lines", "2"],
    ["daemon", "install", "--print"],
    ["daemon", "install"],
    ["daemon", "uninstall"],
    ["daemon", "stop"],
    ["daemon", "stop"],
  ];
  try {
    for (const args of commands) {
      const r = await runCli([...args, "--json"], {
        home,
        env: { ...env, PATH: args[1] === "install" || args[1] === "uninstall" ? "/nonexistent" : process.env.PATH },
      });
      assert.ok(r.code === 0 || (r.code === 3 && args[1] === "status"), `agent ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      try {
        JSON.parse(r.stdout);
      } catch {
        assert.unreachable(`agent ${args.join(" ")} --json printed ${JSON.stringify(r.stdout)}`);
      }
    }
  } finally {
    await runCli(["daemon", "stop"], { home });
    cleanup();
  }
});

test.run();
