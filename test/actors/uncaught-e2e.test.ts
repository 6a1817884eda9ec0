import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, spawnDaemon, tempHome } from "../helpers/cli.js";
import { actorHome, waitFor } from "./daemon-helpers.js";

// Errors a user module lets escape: nothing of the daemon's is on these stacks.
const BOMBS = `
export const bomb = {
  state: { armed: 0 },
  actions: {
    arm: (c) => { c.state.armed++; setTimeout(() => { throw new Error("timer bomb went off"); }, 0); return "armed"; },
    reject: (c) => { Promise.reject(new Error("nobody handles this rejection")); return "rejected"; },
    parseLater: (c) => { setTimeout(JSON.parse, 0, "{"); return "scheduled"; },
    armed: (c) => c.state.armed,
  },
};
export const echo = { actions: { ping: () => "pong" } };
`;

// One daemon for the tests that must leave it running (each test uses its own actors).
let h!: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome({ "bombs.mjs": BOMBS });
});
test.after(async () => {
  await h.dispose();
});

async function crashedRecord(id: string) {
  return waitFor(
    "the actor to be crashed",
    async () => {
      const r = await h.json(["actors", "get", id]);
      return r.state === "crashed" ? r : null;
    },
    8000,
  );
}

async function daemonPid(): Promise<number> {
  return (await h.json(["daemon", "status"])).pid;
}

test("a user action's throwing timer crashes that actor under its crash policy, and the daemon and other actors keep answering", async () => {
  const id = (await h.json(["actors", "create", "bomb", "--key", "t", "--crash-policy", "sleep"])).actor_id;
  assert.is((await h.json(["actors", "call", id, "arm"])).output, "armed");
  const rec = await crashedRecord(id);
  assert.match(rec.error.message, /timer bomb went off/);
  assert.is(rec.error.where, "uncaught exception");
  assert.ok(rec.sleep_ts, "the sleep policy put it to sleep");
  assert.is(await daemonPid(), h.pid, "the same daemon still runs");
  const echo = (await h.json(["actors", "create", "echo", "--key", "e"])).actor_id;
  assert.is((await h.json(["actors", "call", echo, "ping"])).output, "pong");
  // The crashed actor kept what was acknowledged and wakes on the next call.
  assert.is((await h.json(["actors", "call", id, "armed"])).output, 1);
});

test("an unhandled rejection in a user action destroys an actor whose crash policy is destroy", async () => {
  const id = (await h.json(["actors", "create", "bomb", "--key", "r", "--crash-policy", "destroy"])).actor_id;
  assert.is((await h.json(["actors", "call", id, "reject"])).output, "rejected");
  const gone = await waitFor(
    "the actor to be destroyed",
    async () => {
      const r = await h.cli(["actors", "get", id]);
      return r.code === 4 ? r : null;
    },
    8000,
  );
  assert.match(gone.stderr, /no actor with id/);
  assert.is(await daemonPid(), h.pid);
});

test("an error thrown by a built-in function a user action scheduled is charged to that actor, though no user frame is on its stack", async () => {
  const id = (await h.json(["actors", "create", "bomb", "--key", "p", "--crash-policy", "sleep"])).actor_id;
  await h.json(["actors", "call", id, "parseLater"]);
  const rec = await crashedRecord(id);
  assert.match(rec.error.message, /JSON/);
  assert.is(await daemonPid(), h.pid);
});

test("a timer a user module sets when it loads, outside any actor, is logged against the module and the daemon runs on", async () => {
  // Dropped into the watched folder: the daemon loads it while running.
  writeFileSync(
    join(h.home, "actors", "late.mjs"),
    `setTimeout(() => { throw new Error("module-level timer failed"); }, 0);\nexport const quiet = { actions: { ping: () => "pong" } };\n`,
  );
  const line = await waitFor(
    "the log line",
    async () =>
      readFileSync(join(h.home, "logs", "actors.log"), "utf8")
        .split("\n")
        .find((l) => l.includes("module-level timer failed")),
    8000,
  );
  assert.match(line, /late\.mjs/);
  assert.is(await daemonPid(), h.pid);
  const id = (await h.json(["actors", "create", "quiet", "--key", "q"])).actor_id;
  assert.is((await h.json(["actors", "call", id, "ping"])).output, "pong");
});

test("an error nothing claims (code preloaded into the daemon through NODE_OPTIONS) is logged with its stack and the daemon exits non-zero", async () => {
  const { home, cleanup } = tempHome("fault");
  // Code that is not a user actor's: Node preloads it into every process of this environment;
  // it arms itself only in the daemon and fails when the test signals it.
  const preload = join(home, "preload.mjs");
  writeFileSync(
    preload,
    `if (/daemon[\\\\/]main\\.js$/.test(process.argv[1] ?? "")) process.on("SIGUSR2", () => setImmediate(function preloadedFault() { throw new Error("preloaded code failed"); }));\n`,
  );
  const daemon = await spawnDaemon(home, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ""} --import ${preload}`.trim() });
  try {
    daemon.child.kill("SIGUSR2");
    const exit = await daemon.exited;
    assert.is(exit.signal, null);
    assert.is(exit.code, 70);
    const log = readFileSync(join(home, "logs", "daemon.log"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    const fatal = log.find((l) => /unexpected daemon error/.test(l.msg));
    assert.ok(fatal, "the error is in daemon.log");
    assert.is(fatal.level, "error");
    assert.match(fatal.error.message, /preloaded code failed/);
    assert.match(fatal.error.stack, /preloadedFault \(file:.*preload\.mjs/);
    assert.match(daemon.stderr(), /preloaded code failed/);
    // The next client starts a fresh daemon on the same home.
    const status = await runCli(["daemon", "start", "--json"], { home });
    assert.is(status.code, 0, status.stderr);
  } finally {
    daemon.kill();
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test.run();
