// Bad files in $AGENT_HOME/actors/ cannot stop the daemon: a symlink to /dev/zero, to a FIFO,
// to a huge file and a symlink loop are module errors; the daemon starts and the good module loads.
import { execFileSync } from "node:child_process";
import { mkdirSync, symlinkSync, truncateSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { UserModules } from "../../daemon/actors/feature/user-modules.js";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { actorHome } from "../actors/daemon-helpers.js";
import { tempHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

const GOOD = `export const good = { state: { n: 1 }, actions: { n: (c) => c.state.n } };\n`;

interface ModuleStatus {
  file: string;
  ok: boolean;
  error?: string;
}

test("a daemon with symlinks to /dev/zero, a FIFO, a huge file and itself starts and loads the good module", async () => {
  const h = await actorHome({ "good.mjs": GOOD });
  try {
    const dir = join(h.home, "actors");
    const outside = join(h.home, "outside");
    mkdirSync(outside);
    execFileSync("mkfifo", [join(outside, "fifo")]);
    writeFileSync(join(outside, "huge.mjs"), "");
    truncateSync(join(outside, "huge.mjs"), 5 * 1024 * 1024);
    symlinkSync("/dev/zero", join(dir, "zero.mjs"));
    symlinkSync(join(outside, "fifo"), join(dir, "fifo.mjs"));
    symlinkSync(join(outside, "huge.mjs"), join(dir, "huge.mjs"));
    symlinkSync("loop.mjs", join(dir, "loop.mjs"));
    // A restart loads the folder as it is now (the watcher saw the links appear, too).
    await h.stop();
    await h.start();
    const listed = await waitFor(
      "the four bad modules to be reported",
      async () => {
        const r = await h.json<{ definitions: string[]; modules: ModuleStatus[] }>(["actors", "list"]);
        return r.modules.filter((m) => !m.ok).length === 4 ? r : null;
      },
      15_000,
    );
    assert.ok(listed.definitions.includes("good"), listed.definitions.join(","));
    const errorOf = (name: string) => listed.modules.find((m) => m.file.endsWith(name))?.error ?? "";
    assert.match(errorOf("zero.mjs"), /its target \/dev\/zero is not a regular file/);
    assert.match(errorOf("fifo.mjs"), /is not a regular file/);
    assert.match(errorOf("huge.mjs"), /5242880 bytes, more than the 4194304/);
    assert.match(errorOf("loop.mjs"), /symlink loop/);
    const created = await h.json<{ actor_id: string }>(["actors", "create", "good"]);
    const r = await h.cli(["actors", "call", created.actor_id, "n"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /1/);
  } finally {
    await h.dispose();
  }
});

test("a module whose import never finishes is reported as failed after the time limit", async () => {
  const { home, cleanup } = tempHome("mod");
  try {
    writeFileSync(join(home, "hang.mjs"), "await new Promise(() => {});\nexport const hang = { actions: {} };\n");
    writeFileSync(join(home, "good.mjs"), GOOD);
    const registered: string[] = [];
    const sink = {
      registerDefinition: (name: string, _def: ActorDefinition) => void registered.push(name),
      unregisterDefinition: () => undefined,
      hasDefinition: () => false,
    };
    const silent = { debug() {}, info() {}, warn() {}, error() {}, component: () => silent };
    const modules = new UserModules(home, sink, silent, undefined, 200);
    await modules.start(false);
    assert.equal(registered, ["good"]);
    const hang = modules.list().find((m) => m.file.endsWith("hang.mjs"));
    assert.is(hang?.ok, false);
    assert.match(hang?.error ?? "", /did not finish loading within 200 ms/);
  } finally {
    cleanup();
  }
});

test.run();
