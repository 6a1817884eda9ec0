import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, tempHome } from "../helpers/cli.js";

/** Runs `agent <args>` on a fresh home and checks it is a usage error that started no daemon. */
async function assertUsageError(args: string[], message: RegExp): Promise<void> {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(args, { home });
    assert.is(r.code, 2, `agent ${args.join(" ")}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.not.match(r.stderr, /\n\s+at /, "no stack trace");
    assert.is(r.stdout, "");
    assert.not.ok(existsSync(join(home, "daemon.sock")), "no daemon was started");
  } finally {
    cleanup();
  }
}

test("agent chat -q without a prompt is a usage error", async () => {
  await assertUsageError(["chat", "-q"], /-q needs a value/);
});

test("agent chat -q with an empty prompt is a usage error", async () => {
  await assertUsageError(["chat", "-q", "  "], /the prompt is empty/);
});

test("agent chat -q with the prompt split over several arguments is a usage error", async () => {
  await assertUsageError(["chat", "-q", "hello", "world"], /takes the prompt as one argument/);
});

test("agent chat --resume without a session id is a usage error", async () => {
  await assertUsageError(["chat", "--resume"], /--resume needs a value/);
  await assertUsageError(["chat", "--resume", ""], /--resume needs a session id/);
});

test("agent daemon start with an extra argument is a usage error", async () => {
  await assertUsageError(["daemon", "start", "extra"], /agent daemon start takes no arguments \(got extra\)/);
  await assertUsageError(["daemon", "status", "now", "--json"], /takes no arguments/);
});

test("a command's --help prints its help and exits 0, even next to an unknown flag", async () => {
  const { home, cleanup } = tempHome();
  try {
    const r = await runCli(["logs", "--bogus", "-h"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /Usage\n\s+\$ agent logs/);
  } finally {
    cleanup();
  }
});

test("short flags take attached values: agent logs -n1 -cdaemon", async () => {
  const { home, cleanup } = tempHome();
  try {
    mkdirSync(join(home, "logs"));
    writeFileSync(join(home, "logs", "daemon.log"), ['{"msg":"one"}', '{"msg":"two"}', ""].join("\n"));
    const r = await runCli(["logs", "-n1", "--json"], { home });
    assert.is(r.code, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { records: [{ msg: "two" }] });
    const attached = await runCli(["logs", "-cdaemon", "-n2", "--json"], { home });
    assert.is(attached.code, 0, attached.stderr);
    assert.equal(JSON.parse(attached.stdout), { records: [{ msg: "one" }, { msg: "two" }] });
  } finally {
    cleanup();
  }
});

test.run();
