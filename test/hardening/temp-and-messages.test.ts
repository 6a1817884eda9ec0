// Temp files left by a crash are removed at start (only our names, only our folders), and
// messages tell the truth: a corrupt actor file has no backup to restore from, a config with
// several bad values names all of them.
import { existsSync, mkdirSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { actorHome } from "../actors/daemon-helpers.js";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const COUNTER = `export const counter = { state: { n: 0 }, actions: { inc: (c) => ++c.state.n } };\n`;

test("stale temp files of the atomic write are removed at start, other files are left alone", async () => {
  const { home, cleanup } = tempHome("tmp");
  try {
    mkdirSync(join(home, "data", "actors"), { recursive: true });
    mkdirSync(join(home, "sessions"), { recursive: true });
    mkdirSync(join(home, "actors"), { recursive: true });
    const stale = [
      join(home, "config.yaml.4242.k3j5h2.tmp"),
      join(home, "config.yaml.tmp"),
      join(home, ".env.tmp"),
      join(home, "data", "actors", "abc.json.tmp"),
      join(home, "sessions", "s1.json.bak.tmp"),
    ];
    const kept = [
      join(home, "actors", "notes.json.tmp"),
      join(home, "data", "draft.tmp"),
      join(home, "data", "actors", "abc.json.tmpx"),
      join(home, "sessions", "keep.json"),
    ];
    for (const f of [...stale, ...kept]) writeFileSync(f, f.endsWith("keep.json") ? "{}" : "");
    const r = await runCli(["daemon", "start"], { home });
    assert.is(r.code, 0, r.stderr);
    for (const f of stale) assert.not.ok(existsSync(f), `${f} is still there`);
    for (const f of kept) assert.ok(existsSync(f), `${f} was removed`);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("a corrupt actor file's error says there is no backup instead of naming one", async () => {
  const h = await actorHome({ "counter.mjs": COUNTER });
  try {
    const { actor_id: id } = await h.json<{ actor_id: string }>(["actors", "create", "counter"]);
    assert.is((await h.cli(["actors", "call", id, "inc"])).code, 0);
    await h.stop();
    const dir = join(h.home, "data", "actors");
    const file = readdirSync(dir, { recursive: true, encoding: "utf8" }).find((f) => f.endsWith(`${id}.json`));
    assert.ok(file, `no actor file for ${id} in ${dir}`);
    writeFileSync(join(dir, file!), "{ not json");
    await h.start();
    const r = await h.cli(["actors", "call", id, "inc"]);
    assert.is(r.code, 1, r.stdout);
    assert.match(r.stderr, /is not valid JSON/);
    assert.match(r.stderr, /there is no backup of it/);
    assert.not.match(r.stderr, /\.bak/);
  } finally {
    await h.dispose();
  }
});

test("a config with several bad values reports every one of them", async () => {
  const { home, cleanup } = tempHome("cfg");
  try {
    writeFileSync(join(home, "config.yaml"), "logs:\n  keep: many\n  max_bytes: lots\nagent:\n  max_turns: true\n");
    const r = await runCli(["daemon", "start"], { home });
    assert.is.not(r.code, 0);
    const out = r.stderr + r.stdout;
    assert.match(out, /3 invalid values/);
    for (const key of ["logs.keep", "logs.max_bytes", "agent.max_turns"]) assert.match(out, new RegExp(key.replace(".", "\\.")));
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();
