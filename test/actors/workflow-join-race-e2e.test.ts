import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

// Every branch run and every step body leaves a line in $AGENT_HOME/runs-<key>.log, written
// synchronously, so the lines show exactly what ran before and after a kill -9.
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
      {
        name: "timer",
        run: async (b) => {
          mark(w, "timer:run");
          await b.step("t1", () => { mark(w, "timer:step"); });
          await b.sleep(600000);
          return "timer";
        },
      },
      {
        name: "message",
        run: async (b) => {
          mark(w, "message:run");
          await b.step("m1", () => { mark(w, "message:step"); });
          const m = await b.queue.next({ name: "go" });
          return m.body;
        },
      },
    ]);
    await w.step("after", () => { mark(w, "race:" + JSON.stringify(r)); });
    const end = await w.queue.next({ name: "end" });
    await w.step("done", () => { mark(w, "done:" + end.body); });
  },
  actions: { ping: () => "pong" },
};
`;

type Home = Awaited<ReturnType<typeof actorHome>>;

async function send(h: Home, id: string, queue: string, body: unknown): Promise<void> {
  const r = await fetch(`${h.url}/gateway/${id}/queue/${queue}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ body }),
  });
  assert.is(r.status, 200);
}

async function history(h: Home, id: string): Promise<any> {
  const r = await fetch(`${h.url}/gateway/${id}/inspector/workflow-history`);
  return ((await r.json()) as any).history;
}

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

/** The metadata of the history's last entry named `name`. */
const metaOf = (hist: any, name: string) => {
  const e = hist?.entries.filter((x: any) => x.name === name).pop();
  return e && hist.entryMetadata[e.id];
};

test("a join interrupted by kill -9 does not run its finished branch again", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const id = await h.createActor("joiner", "j", "restart");
    // The quick branch's completion and the slow branch's first step are recorded.
    await waitFor("quick branch recorded", async () => metaOf(await history(h, id), "both")?.branches?.quick?.status === "completed", 10_000);
    await waitFor("slow branch's step recorded", async () => metaOf(await history(h, id), "s1")?.status === "completed", 10_000);
    await h.killAndRestart();
    // After the restart the workflow resumes: the slow branch runs again up to its queue wait.
    await waitFor("the slow branch resumed", () => count(h, "j", "slow:run") === 2, 15_000);
    await send(h, id, "go", "hello");
    await waitFor("the join finished", () => lines(h, "j").some((l) => l.startsWith("after:")), 10_000);
    assert.equal(
      lines(h, "j").filter((l) => l.startsWith("after:")),
      ['after:{"quick":1,"slow":"hello"}'],
    );
    assert.is(count(h, "j", "quick:run"), 1, "the finished branch is not run again");
    assert.is(count(h, "j", "quick:step"), 1);
    assert.is(count(h, "j", "slow:step"), 1, "the slow branch's finished step is not run again");
    const both = metaOf(await history(h, id), "both");
    assert.is(both.status, "completed");
    assert.equal(both.output, { quick: 1, slow: "hello" });
  } finally {
    await h.dispose();
  }
});

test("a race interrupted by kill -9 resumes without re-running its branches' finished steps, and cancels the loser", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const id = await h.createActor("racer", "r", "restart");
    await waitFor(
      "both branches' first steps recorded",
      async () => {
        const hist = await history(h, id);
        return metaOf(hist, "t1")?.status === "completed" && metaOf(hist, "m1")?.status === "completed";
      },
      10_000,
    );
    await h.killAndRestart();
    await waitFor("the message branch resumed", () => count(h, "r", "message:run") === 2, 15_000);
    await send(h, id, "go", "hi");
    await waitFor("the race finished", () => lines(h, "r").some((l) => l.startsWith("race:")), 10_000);
    assert.equal(
      lines(h, "r").filter((l) => l.startsWith("race:")),
      ['race:{"winner":"message","value":"hi"}'],
    );
    assert.is(count(h, "r", "timer:step"), 1);
    assert.is(count(h, "r", "message:step"), 1);
    const hist = await history(h, id);
    const first = metaOf(hist, "first");
    assert.is(first.status, "completed");
    assert.is(first.winner, "message");
    assert.is(first.branches.timer.status, "cancelled");
    assert.is(metaOf(hist, "t1"), undefined, "the loser's entries are dropped");
  } finally {
    await h.dispose();
  }
});

test("a race won before kill -9 returns its recorded winner without running any branch", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const id = await h.createActor("racer", "w", "restart");
    await send(h, id, "go", "early");
    await waitFor("the race finished", () => lines(h, "w").some((l) => l.startsWith("race:")), 10_000);
    await waitFor("the workflow waits for the end message", async () => metaOf(await history(h, id), "queue.next")?.status === "running", 10_000);
    await h.killAndRestart();
    await send(h, id, "end", "x");
    await waitFor("the workflow finished", () => count(h, "w", "done:x") === 1, 15_000);
    assert.is(count(h, "w", "timer:run"), 1);
    assert.is(count(h, "w", "message:run"), 1);
    assert.equal(
      lines(h, "w").filter((l) => l.startsWith("race:")),
      ['race:{"winner":"message","value":"early"}'],
    );
  } finally {
    await h.dispose();
  }
});

test.run();
