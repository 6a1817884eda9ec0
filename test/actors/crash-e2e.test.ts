import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

const CRASHER = `
export const crasher = {
  state: { n: 0 },
  run: async () => { throw new Error("run failed on purpose"); },
  actions: { n: (c) => c.state.n },
};
`;

// One daemon for the file; the three crashing actors start together and each test waits for its own.
let h: Awaited<ReturnType<typeof actorHome>>;
const ids: Record<string, string> = {};
test.before(async () => {
  h = await actorHome({ "crasher.mjs": CRASHER });
  for (const policy of ["restart", "sleep", "destroy"]) {
    ids[policy] = (await h.json(["actors", "create", "crasher", "--key", policy, "--crash-policy", policy])).actor_id;
  }
});
test.after(async () => {
  await h?.dispose();
});

test("under crash policy destroy, an actor whose run loop throws is destroyed", async () => {
  const destroyed = await waitFor(
    "destroy policy",
    async () => {
      const r = await h.cli(["actors", "get", ids.destroy!]);
      return r.code === 4 ? r : null;
    },
    8000,
  );
  assert.match(destroyed.stderr, /no actor with id/);
});

test("under crash policy sleep, an actor whose run loop throws sleeps, marked crashed with the error", async () => {
  const slept = await waitFor(
    "sleep policy",
    async () => {
      const r = await h.json(["actors", "get", ids.sleep!]);
      return r.state === "crashed" ? r : null;
    },
    8000,
  );
  assert.is(slept.state, "crashed");
  assert.ok(slept.sleep_ts);
  assert.match(slept.error.message, /run failed on purpose/);
});

test("under crash policy restart, the crash-loop breaker puts the actor to sleep after 5 crashes", async () => {
  const tripped = await waitFor(
    "crash-loop breaker",
    async () => {
      const r = await h.json(["actors", "get", ids.restart!]);
      return r.state === "crashed" ? r : null;
    },
    10_000,
  );
  assert.is(tripped.error.crashes, 5);
  assert.ok(tripped.sleep_ts);
});

test("crashed actors that sleep stay listed and a destroyed one leaves the list", async () => {
  const listed = await waitFor(
    "the destroyed actor to leave the list",
    async () => {
      const l = await h.json(["actors", "list", "--name", "crasher"]);
      return l.actors.length === 2 ? l : null;
    },
    8000,
  );
  assert.equal(listed.actors.map((a: any) => a.key).sort(), ["restart", "sleep"]);
});

test("actors create with an unknown --crash-policy exits 2 naming the choices", async () => {
  const bad = await h.cli(["actors", "create", "crasher", "--crash-policy", "explode"]);
  assert.is(bad.code, 2);
  assert.match(bad.stderr, /crash_policy must be one of/);
});

test.run();
