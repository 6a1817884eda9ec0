// A daemon start pays for every module it loads and every schema it builds: CLI commands start
// one on demand, and the test suite starts hundreds. The model providers' SDK is loaded on the
// first model call, the WebSocket library on the first upgrade, tar on the first backup or
// import and semver on the first distribution check, not at start; and the RPC table builds
// each method's params schema the first time a call of that method arrives.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { methods, type MethodName } from "../../shared/protocol/index.js";
import { chatHome } from "../agent/helpers.js";
import { ROOT } from "../helpers/cli.js";

const TRACE = join(ROOT, "test", "fixtures", "module-trace.mjs");

function packagesIn(file: string): string[] {
  const urls = readFileSync(file, "utf8").split("\n");
  return [...new Set(urls.map((u) => /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(u)?.[1]).filter((p): p is string => !!p))];
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
];

test(`a daemon start loads none of ${ON_FIRST_USE.join(", ")}; the first chat turn loads the SDK, and works`, async () => {
  const h = await chatHome({ script: [{ text: "hello from the model" }] });
  const trace = join(h.home, "modules.txt");
  // The CLI and the daemon it spawns both inherit the tracer through NODE_OPTIONS.
  const env = { NODE_OPTIONS: `--import ${TRACE}`, MODULE_TRACE_FILE: trace };
  try {
    const start = await h.cli(["daemon", "start", "--json"], { env });
    assert.is(start.code, 0, start.stderr);
    const atStart = packagesIn(trace);
    assert.ok(atStart.includes("zod"), `the tracer saw the daemon's modules: ${atStart.join(", ")}`);
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
