// The CLI host (test/helpers/cli-host.ts) runs the suite's `agent` calls in worker threads: a
// call must give what the same call as a process gives, and what a process would show (a
// command that never exits, an exit code from process.exit, output of a child it hands its
// stdio to) must show here too.
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { hostCall } from "../helpers/cli-host.js";
import { ROOT, runCli, startedHome } from "../helpers/cli.js";

const FIXTURE = join(ROOT, "test", "fixtures", "cli-host-root");
const call = (args: string[], env: NodeJS.ProcessEnv = {}, input?: string) => hostCall(FIXTURE, args, { PATH: process.env.PATH, ...env }, input, 20_000);

test("each call has its own environment, HOME (os.homedir) included", async () => {
  const a = await call(["env"], { FOO: "one", HOME: "/tmp/home-one" });
  const b = await call(["env"], { HOME: "/tmp/home-two" });
  assert.is(a.stdout, "one /tmp/home-one\n");
  assert.is(b.stdout, "- /tmp/home-two\n");
});

test("stdin: the given input, or empty and ended", async () => {
  assert.is((await call(["stdin"], {}, "some input")).stdout, "read 10: some input");
  assert.is((await call(["stdin"])).stdout, "read 0: ");
  // Read as file descriptor 0 (readFileSync(0)), as `kanban create --from-file -` does.
  assert.is((await call(["stdin-sync"], {}, "plan text")).stdout, "sync plan text");
  assert.is((await call(["stdin-sync"])).stdout, "sync ");
});

test("a command that leaves its event loop alive fails the call, naming what it left", async () => {
  const error = await call(["leak"]).then(
    () => null,
    (e: Error) => e,
  );
  assert.ok(error, "the call must fail");
  assert.match(error!.message, /left Timeout x1 keeping its event loop alive/);
});

test("process.exit: its code, and what was written before it", async () => {
  const r = await call(["exit"]);
  assert.is(r.code, 3);
  assert.is(r.stdout, "bye\n");
});

test("a child given the call's stdio writes into the call's output", async () => {
  const r = await call(["inherit"]);
  assert.is(r.code, 0);
  assert.is(r.stdout, "from the child\n");
  assert.is(r.stderr, "child err\n");
});

test("an uncaught exception: exit code 1 and its stack on stderr, as a process", async () => {
  const r = await call(["throw"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /thrown later/, JSON.stringify(r));
});

test("signal listeners a call adds are gone before the next call", async () => {
  assert.is((await call(["signal"])).stdout, "1\n");
  assert.is((await call(["signal"])).stdout, "1\n");
});

test("the real CLI: the same code, stdout and stderr in the host as in a process", async () => {
  const d = await startedHome();
  try {
    const calls = [
      ["--version"],
      ["--help"],
      ["help", "kanban"],
      ["kanban", "list", "--json"],
      ["profile", "list", "--json"],
      ["config", "get", "model.name"],
      ["no-such-command"],
      ["kanban", "show", "t_missing", "--json"],
      ["kanban", "create", "", "--json"],
      ["sessions", "list", "--json"],
    ];
    for (const args of calls) {
      const inHost = await runCli(args, { home: d.home });
      const asProcess = await runCli(args, { home: d.home, process: true });
      assert.equal(inHost, asProcess, `agent ${args.join(" ")}`);
    }
    // stdin read to its end: the key for `setup --key-stdin` from a pipe, in both.
    for (const viaProcess of [false, true]) {
      const r = await runCli(
        ["setup", "--provider", "local", "--base-url", "http://127.0.0.1:9/v1", "--key-stdin", "--model", "m", "--no-test", "-y", "--json"],
        {
          home: d.home,
          input: "sk-test-key\n",
          process: viaProcess,
        },
      );
      assert.is(r.code, 0, `${viaProcess ? "process" : "host"}: ${r.stderr}`);
    }
  } finally {
    await d.dispose();
  }
});

test.run();
