// join and race in a user module whose runner's worker dies mid-way (another actor of the same
// module calls process.exit): the history stays with the daemon, the restarted worker resumes
// the workflow, and finished branches and steps are not run again. (kill -9 of the whole daemon
// is workflow-join-race-e2e.test.ts, with the same modules also running in the runner.)
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

const MODULES = `
import { appendFileSync } from "node:fs";
const mark = (w, what) => appendFileSync(new URL("../runs-" + w.key.join("") + ".log", import.meta.url), what + "\\n");

export const joiner = {
  workflow: async (w) => {
    const r = await w.join("both", {
      quick: { run: async (b) => { mark(w, "quick:run"); return b.step("q", () => { mark(w, "quick:step"); return 1; }); } },
      slow: {
        run: async (b) => {
          mark(w, "slow:run");
          await b.step("s1", () => { mark(w, "slow:step"); });
          const m = await b.queue.next({ name: "go" });
          return m.body;
        },
      },
    });
    await w.step("after", () => { mark(w, "after:" + JSON.stringify(r)); });
  },
  actions: { ping: () => "pong" },
};

export const racer = {
  workflow: async (w) => {
    const r = await w.race("first", [
      { name: "timer", run: async (b) => { mark(w, "timer:run"); await b.step("t1", () => { mark(w, "timer:step"); }); await b.sleep(600000); return "timer"; } },
      { name: "message", run: async (b) => { mark(w, "message:run"); await b.step("m1", () => { mark(w, "message:step"); }); return (await b.queue.next({ name: "go" })).body; } },
    ]);
    await w.step("after", () => { mark(w, "race:" + JSON.stringify(r)); });
  },
  actions: { ping: () => "pong" },
};

export const bomber = { actions: { quit: () => { setTimeout(() => process.exit(7), 0); return true; } } };
`;

type Home = Awaited<ReturnType<typeof actorHome>>;

async function post(h: Home, path: string, body: unknown): Promise<Response> {
  return fetch(`${h.url}${path}`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
}

async function history(h: Home, id: string): Promise<any> {
  return ((await (await fetch(`${h.url}/gateway/${id}/inspector/workflow-history`)).json()) as any).history;
}

const metaOf = (hist: any, name: string) => {
  const e = hist?.entries.filter((x: any) => x.name === name).pop();
  return e && hist.entryMetadata[e.id];
};

const lines = (h: Home, key: string): string[] => {
  try {
    return readFileSync(join(h.home, `runs-${key}.log`), "utf8")
      .split("\n")
      .filter(Boolean);
  } catch {
    return [];
  }
};
const count = (h: Home, key: string, line: string) => lines(h, key).filter((l) => l === line).length;

/** Another actor of the module calls process.exit: the worker dies and the runner restarts it. */
async function killWorker(h: Home): Promise<void> {
  const bomber = await h.createActor("bomber", "b");
  await post(h, `/gateway/${bomber}/action/quit`, { args: [] });
  const logs = join(h.home, "logs", "actors.log");
  await waitFor(
    "the runner to restart",
    () => {
      try {
        return readFileSync(logs, "utf8").includes("an actor runner restarted");
      } catch {
        return false;
      }
    },
    15_000,
  );
}

test("a join whose runner's worker dies mid-way resumes in the new worker without running its finished branch again", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const id = await h.createActor("joiner", "j");
    await waitFor("quick branch recorded", async () => metaOf(await history(h, id), "both")?.branches?.quick?.status === "completed", 10_000);
    await waitFor("slow branch's step recorded", async () => metaOf(await history(h, id), "s1")?.status === "completed", 10_000);
    await killWorker(h);
    await waitFor("the slow branch resumed in the new worker", () => count(h, "j", "slow:run") === 2, 15_000);
    assert.is((await post(h, `/gateway/${id}/queue/go`, { body: "hello" })).status, 200);
    await waitFor("the join finished", () => lines(h, "j").some((l) => l.startsWith("after:")), 10_000);
    assert.equal(
      lines(h, "j").filter((l) => l.startsWith("after:")),
      ['after:{"quick":1,"slow":"hello"}'],
    );
    assert.is(count(h, "j", "quick:run"), 1, "the finished branch is not run again");
    assert.is(count(h, "j", "quick:step"), 1);
    assert.is(count(h, "j", "slow:step"), 1, "the slow branch's finished step is not run again");
  } finally {
    await h.dispose();
  }
});

test("a race whose runner's worker dies mid-way resumes in the new worker without re-running finished steps, and cancels the loser", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const id = await h.createActor("racer", "r");
    await waitFor(
      "both branches' first steps recorded",
      async () => {
        const hist = await history(h, id);
        return metaOf(hist, "t1")?.status === "completed" && metaOf(hist, "m1")?.status === "completed";
      },
      10_000,
    );
    await killWorker(h);
    await waitFor("the message branch resumed in the new worker", () => count(h, "r", "message:run") === 2, 15_000);
    assert.is((await post(h, `/gateway/${id}/queue/go`, { body: "hi" })).status, 200);
    await waitFor("the race finished", () => lines(h, "r").some((l) => l.startsWith("race:")), 10_000);
    assert.equal(
      lines(h, "r").filter((l) => l.startsWith("race:")),
      ['race:{"winner":"message","value":"hi"}'],
    );
    assert.is(count(h, "r", "timer:step"), 1);
    assert.is(count(h, "r", "message:step"), 1);
    const first = metaOf(await history(h, id), "first");
    assert.is(first.winner, "message");
    assert.is(first.branches.timer.status, "cancelled");
  } finally {
    await h.dispose();
  }
});

test.run();
