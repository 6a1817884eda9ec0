import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

// Short limits, so the watchdog and the heap limit act within the test's time.
process.env.AGENT_RUNNER_WATCHDOG_MS = "800";
process.env.AGENT_RUNNER_MAX_MEMORY_MB = "48";

// One module per failure mode; each runs in its own runner (worker thread).
const MODULES = {
  "timer.mjs": `export const timer = { state: { n: 0 }, actions: {
    arm: (c) => { c.state.n++; setTimeout(() => { throw new Error("timer went off"); }, 0); return "armed"; },
    n: (c) => c.state.n } };`,
  "rejection.mjs": `export const rejection = { actions: { fire: () => { Promise.reject(new Error("nobody listens")); return "fired"; }, ok: () => "ok" } };`,
  "exiter.mjs": `export const exiter = { state: { n: 0 }, actions: {
    bump: (c) => ++c.state.n,
    quit: () => { process.exit(3); },
    n: (c) => c.state.n } };`,
  "spinner.mjs": `export const spinner = { state: { n: 0 }, actions: {
    bump: (c) => ++c.state.n,
    spin: async () => { await null; for (;;) {} },
    n: (c) => c.state.n } };`,
  // Allocations of 8 MB each: the heap limit is reached in a few steps, well before the watchdog
  // even on a loaded machine (runner threads have a small young generation).
  "hog.mjs": `export const hog = { actions: {
    hog: () => { const keep = []; for (;;) keep.push(new Array(1e6).fill({ x: Math.random() })); },
    ok: () => "ok" } };`,
  "echo.mjs": `export const echo = { state: { n: 0 }, actions: { ping: () => "pong", bump: (c) => ++c.state.n } };`,
};

let h!: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome(MODULES);
});
test.after(async () => {
  await h.dispose();
});

async function create(name: string, key: string, policy = "sleep"): Promise<string> {
  return (await h.json(["actors", "create", name, "--key", key, "--crash-policy", policy])).actor_id;
}

async function call(id: string, action: string, args: unknown[] = []): Promise<{ status: number; json: any }> {
  const r = await fetch(`${h.url}/gateway/${id}/action/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ args }),
  });
  return { status: r.status, json: await r.json() };
}

async function crashed(id: string) {
  return waitFor(
    "the actor to be crashed",
    async () => {
      const r = await h.json(["actors", "get", id]);
      return r.state === "crashed" ? r : null;
    },
    10_000,
  );
}

async function daemonPid(): Promise<number> {
  return (await h.json(["daemon", "status"])).pid;
}

/** Another module's actor answers, and its state kept counting. */
async function echoAnswers(id: string) {
  assert.is((await call(id, "ping")).json.output, "pong");
}

test("a throw from a user timer crashes only that actor; its runner and other actors keep answering", async () => {
  const echo = await create("echo", "t");
  const id = await create("timer", "t");
  assert.is((await call(id, "arm")).json.output, "armed");
  const rec = await crashed(id);
  assert.match(rec.error.message, /timer went off/);
  assert.is(rec.error.where, "uncaught exception");
  await echoAnswers(echo);
  assert.is((await call(id, "n")).json.output, 1, "woken again with its acknowledged state");
  assert.is(await daemonPid(), h.pid);
});

test("an unhandled rejection crashes only that actor and the daemon keeps answering", async () => {
  const echo = await create("echo", "r");
  const id = await create("rejection", "r");
  assert.is((await call(id, "fire")).json.output, "fired");
  const rec = await crashed(id);
  assert.is(rec.error.where, "unhandled rejection");
  await echoAnswers(echo);
  assert.is((await call(id, "ok")).json.output, "ok");
  assert.is(await daemonPid(), h.pid);
});

test("process.exit ends only the actor's runner: the call fails clearly, the actor is crashed, and its runner comes back", async () => {
  const echo = await create("echo", "x");
  const id = await create("exiter", "x");
  assert.is((await call(id, "bump")).json.output, 1);
  const r = await call(id, "quit");
  assert.is(r.status, 400);
  assert.is(r.json.code, "runner_failed");
  assert.match(r.json.message, /process\.exit\(3\)/);
  await echoAnswers(echo);
  const rec = await crashed(id);
  assert.is(rec.error.where, "process.exit");
  assert.is(await waitFor("the restarted runner to answer", async () => (await call(id, "n")).json.output), 1);
  assert.is(await daemonPid(), h.pid);
});

test("an endless synchronous loop is stopped by the watchdog while other actors answer, and the call gets an error instead of hanging", async () => {
  const echo = await create("echo", "s");
  const id = await create("spinner", "s");
  assert.is((await call(id, "bump")).json.output, 1);
  const spinning = call(id, "spin");
  // During the loop: another module's actor answers.
  await echoAnswers(echo);
  const r = await spinning;
  assert.is(r.status, 400);
  assert.is(r.json.code, "runner_failed");
  assert.match(r.json.message, /did not return to the event loop/);
  const rec = await crashed(id);
  assert.is(rec.error.where, "watchdog");
  assert.is(await waitFor("the restarted runner to answer", async () => (await call(id, "n")).json.output), 1);
  await echoAnswers(echo);
  assert.is(await daemonPid(), h.pid);
});

test("a bystander of a runner stopped by another actor's loop keeps its state and is not marked crashed", async () => {
  const culprit = await create("spinner", "culprit");
  const bystander = await create("spinner", "bystander");
  assert.is((await call(bystander, "bump")).json.output, 1);
  assert.is((await call(bystander, "bump")).json.output, 2);
  const r = await call(culprit, "spin");
  assert.is(r.json.code, "runner_failed");
  await crashed(culprit);
  assert.is(await waitFor("the bystander to answer", async () => (await call(bystander, "n")).json.output), 2);
  const rec = await h.json(["actors", "get", bystander]);
  assert.is(rec.error ?? null, null);
  assert.is(rec.state, "running");
});

test("a memory blow-up ends only the actor's runner at its heap limit", async () => {
  const echo = await create("echo", "m");
  const id = await create("hog", "m");
  const r = await call(id, "hog");
  assert.is(r.status, 400);
  assert.is(r.json.code, "runner_failed");
  assert.match(r.json.message, /ran out of memory/);
  const rec = await crashed(id);
  assert.is(rec.error.where, "out of memory");
  await echoAnswers(echo);
  assert.is(await waitFor("the restarted runner to answer", async () => (await call(id, "ok")).json.output), "ok");
  assert.is(await daemonPid(), h.pid);
});

test("editing a module after its runner was restarted still reloads the code", async () => {
  const id = await create("exiter", "reload");
  await call(id, "quit");
  await crashed(id);
  writeFileSync(
    join(h.home, "actors", "exiter.mjs"),
    `export const exiter = { state: { n: 0 }, actions: { bump: (c) => ++c.state.n, quit: () => "no longer", n: (c) => c.state.n + 100 } };`,
  );
  assert.is(await waitFor("the new code to answer", async () => ((await call(id, "quit")).json.output === "no longer" ? true : null)), true);
  assert.is((await call(id, "n")).json.output, 100);
});

test.run();
