import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome, waitFor } from "./daemon-helpers.js";

const GREETER = `export const greeter = { state: { n: 0 }, actions: { hello: (c, who) => { c.state.n++; c.log.info("greeted", { who }); return "hello " + who; } } };\n`;

test("agent actors new scaffolds a counter module that works at once through the CLI", async () => {
  const h = await actorHome();
  try {
    const made = await h.cli(["actors", "new", "counter"]);
    assert.is(made.code, 0, made.stderr);
    assert.match(readFileSync(join(h.home, "actors", "counter.mjs"), "utf8"), /export const counter/);
    const id = (await h.cli(["actors", "create", "counter", "--key", "demo"])).stdout.trim();
    assert.ok(id, "create printed an id");
    const call = await h.cli(["actors", "call", id, "increment", "5"]);
    assert.is(call.code, 0, call.stderr);
    assert.is(call.stdout.trim(), "5");
    assert.equal((await h.json(["actors", "state", id])).state, { count: 5 });
    // A user error from the module reaches the CLI with its message.
    const bad = await h.cli(["actors", "call", id, "increment", '"x"']);
    assert.is.not(bad.code, 0);
    assert.match(bad.stderr, /by must be a number/);
    const again = await h.cli(["actors", "new", "counter"]);
    assert.is.not(again.code, 0);
    assert.match(again.stderr, /already exists/);
  } finally {
    await h.dispose();
  }
});

test("agent actors new --workflow scaffolds a workflow that runs its steps", async () => {
  const h = await actorHome();
  try {
    assert.is((await h.cli(["actors", "new", "orders", "--workflow"])).code, 0);
    const rec = await h.json(["actors", "create", "orders", "--key", "w"]);
    const state = await waitFor(
      "the prepare step",
      async () => {
        const s = (await h.json(["actors", "call", rec.actor_id, "status"])).output;
        return s.stage === "prepared" ? s : null;
      },
      8000,
    );
    assert.is(state.orders, 0);
    const r = await fetch(`${h.url}/gateway/${rec.actor_id}/queue/order`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body: { amount: 7 }, wait: true, timeout: 5000 }),
    });
    const sent = (await r.json()) as { status: string; response: unknown };
    assert.is(sent.status, "completed");
    assert.equal(sent.response, { total: 7 });
  } finally {
    await h.dispose();
  }
});

test("a changed module is reloaded and a broken one is reported while the others keep working", async () => {
  const h = await actorHome({ "greeter.mjs": GREETER });
  try {
    const rec = await h.json(["actors", "create", "greeter", "--key", "g"]);
    assert.is((await h.json(["actors", "call", rec.actor_id, "hello", "ann"])).output, "hello ann");
    writeFileSync(join(h.home, "actors", "greeter.mjs"), GREETER.replace("actions: {", "actions: { bye: () => 'bye', "));
    writeFileSync(join(h.home, "actors", "broken.mjs"), "export const broken = { actions: {\n");
    const bye = await waitFor("reloaded module", async () => (await h.json(["actors", "call", rec.actor_id, "bye"])).output, 8000);
    assert.is(bye, "bye");
    const list = await waitFor(
      "broken module reported",
      async () => {
        const l = await h.json(["actors", "list"]);
        return l.modules.some((m: any) => m.file.endsWith("broken.mjs") && !m.ok) ? l : null;
      },
      8000,
    );
    assert.ok(list.actors.some((a: any) => a.actor_id === rec.actor_id));
    const human = await h.cli(["actors", "list"]);
    assert.match(human.stdout, /module errors:[\s\S]*broken\.mjs/);
    // State survived the reload (the actor slept and woke with the new definition).
    assert.is((await h.json(["actors", "call", rec.actor_id, "hello", "bob"])).output, "hello bob");
    assert.equal((await h.json(["actors", "state", rec.actor_id])).state, { n: 2 });
  } finally {
    await h.dispose();
  }
});

test("get, logs (also after a restart) and destroy work through the CLI and destroyed actors leave the list", async () => {
  const h = await actorHome({ "greeter.mjs": GREETER });
  try {
    const rec = await h.json(["actors", "create", "greeter"]);
    await h.json(["actors", "call", rec.actor_id, "hello", "zed"]);
    const got = await h.json(["actors", "get", rec.actor_id]);
    assert.is(got.state, "running");
    assert.is(got.name, "greeter");
    const logs = await h.json(["actors", "logs", rec.actor_id]);
    assert.is(logs.lines[0].msg, "greeted");
    assert.equal(logs.lines[0].fields, { who: "zed" });
    // After a restart the lines come from the log file.
    await h.stop();
    await h.start();
    const after = await h.json(["actors", "logs", rec.actor_id]);
    assert.is(after.lines[0].msg, "greeted");
    assert.equal(after.lines[0].fields, { who: "zed" });
    // Also once the log file has been rotated: the line is then in actor-logs.log.1.
    await h.stop();
    const actorLog = join(h.home, "logs", "actor-logs.log");
    renameSync(actorLog, `${actorLog}.1`);
    await h.start();
    const rotated = await h.json(["actors", "logs", rec.actor_id]);
    assert.is(rotated.lines[0]?.msg, "greeted", JSON.stringify(rotated));
    assert.is((await h.cli(["actors", "destroy", rec.actor_id])).code, 0);
    assert.equal((await h.json(["actors", "list", "--name", "greeter"])).actors, []);
    const gone = await h.cli(["actors", "get", rec.actor_id]);
    assert.is(gone.code, 4);
    assert.match(gone.stderr, /no actor with id/);
  } finally {
    await h.dispose();
  }
});

test("agent actors create of an unknown actor name exits 4 (not found), prints no stack and creates nothing", async () => {
  const h = await actorHome({ "greeter.mjs": GREETER });
  try {
    const unknown = await h.cli(["actors", "create", "nope"]);
    assert.is(unknown.code, 4);
    assert.match(unknown.stderr, /no actor definition named nope/);
    assert.not.match(unknown.stderr, /\n\s+at /);
    assert.equal((await h.json(["actors", "list"])).actors, []);
  } finally {
    await h.dispose();
  }
});

test.run();
