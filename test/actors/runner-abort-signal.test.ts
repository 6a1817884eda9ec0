import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

// c.abortSignal of a user actor in its runner worker: aborted when the actor sleeps, whether
// its code took the signal before the sleep or only asks for it afterwards (it is made lazily).
const MODULES = {
  "signals.mjs": `const seen = [];
export const waiter = {
  actions: {
    arm: (c) => void c.abortSignal.addEventListener("abort", () => seen.push("armed:" + c.abortSignal.reason?.name)),
    late: (c) => void setTimeout(() => seen.push("late:" + c.abortSignal.aborted), 500),
    nap: (c) => c.sleep(),
  },
  options: { sleepTimeout: 600000 },
};
export const probe = { actions: { seen: () => seen }, options: { sleepTimeout: 600000 } };`,
};

let h!: Awaited<ReturnType<typeof actorHome>>;
test.before(async () => {
  h = await actorHome(MODULES);
});
test.after(async () => {
  await h.dispose();
});

const create = (name: string, key: string) => h.createActor(name, key);
const call = (id: string, action: string) => h.action(id, action);

test("a runner actor's abort signal fires when it sleeps, also when asked for only after the sleep", async () => {
  const armed = await create("waiter", "armed");
  const late = await create("waiter", "late");
  const probe = await create("probe", "p");
  await call(armed, "arm");
  await call(late, "late");
  await call(armed, "nap");
  await call(late, "nap");
  const seen = await waitFor("both signals seen", async () => {
    const s = (await call(probe, "seen")) as string[];
    return s.length === 2 ? s : null;
  });
  assert.equal([...seen].sort(), ["armed:ActorStopped", "late:true"]);
});

test.run();
