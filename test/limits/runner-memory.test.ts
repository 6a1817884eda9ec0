// The runner's memory limit covers memory outside the V8 heap: a user actor that allocates
// 100 MB Buffers (or typed arrays) in a loop has its runner ended as out of memory, the daemon's
// RSS stays under the runner's limit plus the daemon's own, the call fails with why, the actor
// is crashed under its policy, and an actor of another module keeps answering.
//
// Safety: the test reads the daemon's VmRSS while the actor runs and SIGKILLs it past 2 GB, so
// a daemon without the limit fails the test instead of taking the machine's memory.
import { readFileSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome } from "../actors/daemon-helpers.js";
import { waitFor } from "../helpers/wait.js";

const HOG = `
export const hog = {
  state: {},
  actions: {
    buffers: () => { const keep = []; for (;;) keep.push(Buffer.alloc(100 * 1024 * 1024, 1)); },
    typed: () => { const keep = []; for (;;) keep.push(new Uint8Array(100 * 1024 * 1024).fill(1)); },
    // Asynchronous: the event loop turns between allocations.
    slowly: async () => { const keep = []; for (;;) { keep.push(Buffer.allocUnsafe(50 * 1024 * 1024).fill(2)); await new Promise((r) => setTimeout(r, 1)); } },
    // An allocator the worker's guard does not wrap (TextEncoder makes its arrays natively): the daemon's sampler stops it.
    encoded: () => { const s = "x".repeat(50 * 1024 * 1024); const e = new TextEncoder(); const keep = []; for (;;) keep.push(e.encode(s)); },
    ok: () => "fine",
  },
};
`;
const OTHER = `
export const other = { state: { n: 0 }, actions: { ping: (c) => ++c.state.n } };
`;

const KILL_AT_KB = 2 * 1024 * 1024;

function memKb(pid: number, field: "VmRSS" | "VmHWM"): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : 0;
}

let h: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome({ "hog.mjs": HOG, "other.mjs": OTHER });
  await h.start();
  await waitFor("the modules", async () => {
    const names = ((await (await fetch(`${h.url}/metadata`)).json()) as any)?.actorNames;
    return names?.hog && names?.other;
  });
});
test.after(async () => {
  await h?.stop();
  h?.kill();
});

for (const action of ["buffers", "typed", "slowly", "encoded"]) {
  test(`a ${action} blow-up ends the runner as out of memory; the daemon stays small and another module answers`, async () => {
    const hog = await h.createActor("hog", action, "sleep");
    const other = await h.createActor("other", action, "sleep");
    assert.is(await h.action(other, "ping"), 1);
    const before = memKb(h.pid, "VmRSS");
    let peak = before;
    let killed = false;
    const watch = setInterval(() => {
      try {
        const rss = memKb(h.pid, "VmRSS");
        peak = Math.max(peak, rss);
        if (rss > KILL_AT_KB && !killed) {
          killed = true;
          h.kill();
        }
      } catch {}
    }, 20);
    let r: Response;
    try {
      r = await fetch(`${h.url}/gateway/${hog}/action/${action}`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
    } finally {
      clearInterval(watch);
    }
    assert.not.ok(killed, `the daemon went past ${KILL_AT_KB >> 10} MB (peak ${peak >> 10} MB) and was killed`);
    const body = (await r.json()) as any;
    assert.is(r.status, 400, JSON.stringify(body));
    assert.is(`${body.group}.${body.code}`, "actor.runner_failed");
    assert.match(body.message, /memory limit|out of memory/);
    // Which side caught it: the worker's own check, or (an allocator it does not wrap) the daemon's sampler.
    assert.match(body.message, action === "encoded" ? /daemon grew by/ : /MB of heap and buffers/, body.message);
    // Heap (512 MB) + what one allocation can add, over the daemon's own: well under 1.2 GB.
    assert.ok(peak - before < 1200 * 1024, `the daemon grew by ${(peak - before) >> 10} MB (from ${before >> 10} MB)`);
    const crashed = await waitFor("the hog to be crashed", async () => {
      const a = await h.json(["actors", "get", hog]);
      return a.state === "crashed" ? a : null;
    });
    assert.is(crashed.error.where, "out of memory");
    // The other module's actor never stopped answering; the hog's runner is back for its other actions.
    assert.is(await h.action(other, "ping"), 2);
    await waitFor(
      "the hog's runner to restart",
      async () =>
        (await fetch(`${h.url}/gateway/${hog}/action/ok`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' })).status ===
        200,
    );
    assert.ok(memKb(h.pid, "VmHWM") < KILL_AT_KB);
  });
}

test.run();
