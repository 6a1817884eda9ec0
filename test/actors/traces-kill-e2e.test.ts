import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

// The loss window the README states ("Actor traces"): an awake actor's spans are on disk about
// one second after they were recorded. The wait allows for a loaded machine.
const WINDOW_MS = 1000;
const SLACK_MS = 4000;

const MODULES = `
export const stamper = {
  state: { n: 0 },
  actions: { stamp: (c) => ++c.state.n },
  options: { sleepTimeout: 600000 },
};
`;

/** Whether any file of the actor store holds `needle` (the ring's file or the small-file journal). */
function onDisk(home: string, needle: string): boolean {
  const dir = join(home, "data", "actors");
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).some((f) => {
    try {
      return readFileSync(join(dir, f), "utf8").includes(needle);
    } catch {
      return false;
    }
  });
}

test("an awake actor's spans survive kill -9 once the stated loss window has passed", async () => {
  const h = await actorHome({ "m.mjs": MODULES });
  try {
    const put = await fetch(`${h.url}/actors`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ name: "stamper", key: "t", runner_name_selector: "default", crash_policy: "restart" }),
    });
    const id = ((await put.json()) as any).actor.actor_id as string;
    for (let i = 0; i < 3; i++) {
      const r = await fetch(`${h.url}/gateway/${id}/action/stamp`, { method: "POST", headers: { "content-type": "application/json" }, body: '{"args":[]}' });
      assert.is(r.status, 200);
    }
    const last = Date.now();
    await waitFor("the spans on disk", () => onDisk(h.home, "action stamp"), WINDOW_MS + SLACK_MS);
    const took = Date.now() - last;
    assert.ok(took <= WINDOW_MS + SLACK_MS, `on disk after ${took} ms`);
    // The actor is still awake: nothing but the periodic save wrote its spans.
    const rec = (await (await fetch(`${h.url}/actors?actor_ids=${id}`)).json()) as any;
    assert.is(rec.actors[0].sleep_ts, null);

    await h.killAndRestart();
    const t = (await (await fetch(`${h.url}/gateway/${id}/inspector/traces?startMs=0&limit=100`)).json()) as any;
    const names = t.otlp.resourceSpans[0].scopeSpans[0].spans.map((s: any) => s.name);
    assert.is(names.filter((n: string) => n === "action stamp").length, 3);
  } finally {
    await h.dispose();
  }
});

test.run();
