// A daemon start pays for every module it loads and every schema it builds: CLI commands start
// one on demand, and the test suite starts hundreds. The model providers' SDK is loaded on the
// first model call, the WebSocket library on the first upgrade, tar on the first backup or
// import, semver on the first distribution check, cbor-x on the first CBOR body, croner on the
// first cron expression, tinypool on the first tool run and FlexSearch with the stemmer on the
// search index's first use, not at start; and the RPC table
// builds each method's params schema the first time a call of that method arrives. zod and yaml,
// which every start needs, are inlined in the daemon's build (scripts/bundle.mjs: ~120 files
// fewer to resolve and read), so they are never loaded from node_modules; and the files of the
// build a start loads stay few (scripts/bench/daemon-start.mjs measures the CPU).
import { readFileSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { methods, type MethodName } from "../../shared/protocol/index.js";
import { chatHome } from "../agent/helpers.js";
import { ROOT, spawnDaemon, tempHome } from "../helpers/cli.js";

const TRACE = join(ROOT, "test", "fixtures", "module-trace.mjs");

function packagesIn(file: string): string[] {
  const urls = readFileSync(file, "utf8").split("\n");
  return [...new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter((p): p is string => !!p))];
}

/** The files of the build (dist/) in a trace, each once. */
function ownFilesIn(file: string): string[] {
  const urls = readFileSync(file, "utf8").split("\n");
  return [...new Set(urls.filter((u) => u.startsWith("file:") && u.includes("/dist/") && !u.includes("/node_modules/")))];
}

/** Packages only some daemons ever need, each loaded where it is first used (the tracer sees ESM resolutions: `import`, and `import()`). */
const ON_FIRST_USE = [
  "openai",
  "ws",
  "tar",
  "semver",
  "@modelcontextprotocol/sdk",
  "smol-toml",
  "openid-client",
  "@microsoft/microsoft-graph-client",
  "ipaddr.js",
  "cbor-x",
  "croner",
  "tinypool",
  "flexsearch",
  "stemmer",
  // Inlined in the daemon's build: never from node_modules.
  "zod",
  "yaml",
];

/** Files of the build (dist/) a daemon start loads: 20 on 2026-11-28 (its main and chunks it shares with lazy imports); 72 when each feature was its own lazy import. */
const MAX_OWN_FILES = 28;

test(`a daemon start loads none of ${ON_FIRST_USE.join(", ")}; the first chat turn loads the SDK, and works`, async () => {
  const h = await chatHome({ script: [{ text: "hello from the model" }] });
  const trace = join(h.home, "modules.txt");
  // The CLI and the daemon it spawns both inherit the tracer through NODE_OPTIONS.
  const env = { NODE_OPTIONS: `--import ${TRACE}`, MODULE_TRACE_FILE: trace };
  try {
    const start = await h.cli(["daemon", "start", "--json"], { env });
    assert.is(start.code, 0, start.stderr);
    const atStart = packagesIn(trace);
    assert.ok(
      ownFilesIn(trace).some((u) => u.endsWith("/dist/daemon/main.js")),
      "the tracer saw the daemon's modules",
    );
    assert.equal(
      atStart.filter((p) => ON_FIRST_USE.includes(p)),
      [],
      `loaded at start: ${atStart.join(", ")}`,
    );
    const r = await h.chat(["-q", "hi"], { env });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "hello from the model");
    assert.ok(packagesIn(trace).includes("openai"), "the SDK is loaded when a model is called");
  } finally {
    await h.dispose();
  }
});

test(`a daemon start loads at most ${MAX_OWN_FILES} files of dist/`, async () => {
  const { home, cleanup } = tempHome("ads");
  const trace = join(home, "..", `${basename(home)}-modules.txt`);
  try {
    // The daemon alone (the CLI's own files would count too if it started the daemon).
    const d = await spawnDaemon(home, { NODE_OPTIONS: `--import ${TRACE}`, MODULE_TRACE_FILE: trace });
    try {
      const own = ownFilesIn(trace);
      assert.ok(
        own.some((u) => u.endsWith("/dist/daemon/main.js")),
        `the tracer saw the daemon's modules: ${own.join(", ")}`,
      );
      assert.ok(own.length <= MAX_OWN_FILES, `a start loaded ${own.length} files of dist/: ${own.join("\n")}`);
    } finally {
      d.child.kill("SIGTERM");
      await d.exited;
    }
  } finally {
    rmSync(trace, { force: true });
    cleanup();
  }
});

test("importing the RPC table builds no params schema; each is built once, on first use", () => {
  const names = Object.keys(methods) as MethodName[];
  assert.ok(names.length > 100, `${names.length} methods`);
  for (const name of names) {
    const d = Object.getOwnPropertyDescriptor(methods[name], "params");
    assert.type(d?.get, "function", `${name}: params is built on first use`);
  }
  const show = methods["kanban.show"];
  const first = show.params;
  assert.is(show.params, first, "built once");
  assert.ok(first.safeParse({ id: "t_0123abcd" }).success);
  assert.not.ok(first.safeParse({ id: "t_0123abcd", stray: 1 }).success, "the schema is the strict one");
});

test.run();
