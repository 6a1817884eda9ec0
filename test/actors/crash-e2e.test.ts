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

test("each crash policy through the daemon: restart trips the crash-loop breaker, sleep sleeps, destroy destroys", async () => {
  const h = await actorHome({ "crasher.mjs": CRASHER });
  try {
    const ids: Record<string, string> = {};
    for (const policy of ["restart", "sleep", "destroy"]) {
      ids[policy] = (await h.json(["actors", "create", "crasher", "--key", policy, "--crash-policy", policy])).actor_id;
    }
    const destroyed = await waitFor("destroy policy", async () => {
      const r = await h.cli(["actors", "get", ids.destroy!]);
      return r.code === 4 ? r : null;
    }, 8000);
    assert.match(destroyed.stderr, /no actor with id/);
    const slept = await h.json(["actors", "get", ids.sleep!]);
    assert.is(slept.state, "crashed");
    assert.ok(slept.sleep_ts);
    assert.match(slept.error.message, /run failed on purpose/);
    const tripped = await waitFor("crash-loop breaker", async () => {
      const r = await h.json(["actors", "get", ids.restart!]);
      return r.state === "crashed" ? r : null;
    }, 10_000);
    assert.is(tripped.error.crashes, 5);
    assert.ok(tripped.sleep_ts);
    const listed = await h.json(["actors", "list", "--name", "crasher"]);
    assert.equal(listed.actors.map((a: any) => a.key).sort(), ["restart", "sleep"]);
    const bad = await h.cli(["actors", "create", "crasher", "--crash-policy", "explode"]);
    assert.is(bad.code, 2);
    assert.match(bad.stderr, /crash_policy must be one of/);
  } finally {
    await h.dispose();
  }
});

test.run();
