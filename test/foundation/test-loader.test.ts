// The tests' TypeScript loader (scripts/test-loader.mjs, test-loader-hooks.mjs, test-compile.mjs),
// driven on a small project of its own: a copy of the three scripts in a temp checkout, so its
// cache (.tmp/test-js there) is the test's, not the suite's. The module keeps its .ts URL, a
// `./x.js` import finds x.ts when only the .ts exists, the cache is what runs and a changed file
// is compiled again (alone), a file the cache does not hold still loads, and a stack trace
// points at the .ts file and line.
import { spawnSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT, tempHome } from "../helpers/cli.js";

function project() {
  const { home: dir, cleanup } = tempHome("tl");
  mkdirSync(join(dir, "scripts"));
  for (const f of ["test-loader.mjs", "test-loader-hooks.mjs", "test-compile.mjs"]) copyFileSync(join(ROOT, "scripts", f), join(dir, "scripts", f));
  symlinkSync(join(ROOT, "node_modules"), join(dir, "node_modules"));
  writeFileSync(join(dir, "package.json"), '{ "type": "module" }\n');
  writeFileSync(join(dir, "tsconfig.json"), JSON.stringify({ compilerOptions: { strict: true, verbatimModuleSyntax: true }, include: ["src"] }));
  mkdirSync(join(dir, "src"));
  // Types erased before the throw, so the JavaScript's lines are not the TypeScript's.
  writeFileSync(
    join(dir, "src", "b.ts"),
    [
      "export interface Shape {",
      "  side: number;",
      "  name: string;",
      "}",
      "export const value: string = 'from b.ts';",
      "export function boom(shape: Shape): never {",
      "  throw new Error('boom ' + shape.name);",
      "}",
      "",
    ].join("\n"),
  );
  // Both exist: `./c.js` is the JavaScript file, as without the loader.
  writeFileSync(join(dir, "src", "c.ts"), "export const which: string = 'c.ts';\n");
  writeFileSync(join(dir, "src", "c.js"), "export const which = 'c.js';\n");
  writeFileSync(
    join(dir, "src", "main.ts"),
    [
      "import { boom, type Shape, value } from './b.js';",
      "import { which } from './c.js';",
      "console.log(JSON.stringify({ value, which, url: import.meta.url }));",
      "const shape: Shape = { side: 1, name: 'square' };",
      "if (process.argv[2] === 'throw') boom(shape);",
      "",
    ].join("\n"),
  );
  const compile = () => {
    const r = spawnSync(process.execPath, [join(dir, "scripts", "test-compile.mjs")], { encoding: "utf8" });
    assert.is(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  const run = (file: string, ...args: string[]) =>
    spawnSync(process.execPath, ["--import", pathToFileURL(join(dir, "scripts", "test-loader.mjs")).href, file, ...args], { cwd: dir, encoding: "utf8" });
  return { dir, cleanup, compile, run };
}

const main = (dir: string) => join(dir, "src", "main.ts");
const cached = (dir: string, rel: string) => join(dir, ".tmp", "test-js", `${rel}.js`);

test("the cache runs under the .ts URLs, ./x.js finds x.ts only when there is no x.js, and a changed file is compiled again, alone", () => {
  const p = project();
  try {
    // A fresh checkout compiles everything (the .js file is not its business); then nothing.
    assert.match(p.compile(), /^compiled 3 of 3 \.ts files/);
    assert.match(p.compile(), /^compiled 0 of 3 \.ts files/);
    const r = p.run(main(p.dir));
    assert.is(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout), { value: "from b.ts", which: "c.js", url: pathToFileURL(main(p.dir)).href });
    // What runs is the cached copy: marked there, the mark shows.
    const copy = cached(p.dir, "src/b.ts");
    writeFileSync(copy, readFileSync(copy, "utf8").replace("from b.ts", "from the cache"));
    assert.match(p.run(main(p.dir)).stdout, /"value":"from the cache"/);
    // The source changes: its copy is stale, so the loader compiles the file itself (a file
    // written while the tests run) until the next run's compile, which takes that file alone.
    writeFileSync(join(p.dir, "src", "b.ts"), readFileSync(join(p.dir, "src", "b.ts"), "utf8").replace("from b.ts", "from b.ts, changed"));
    assert.match(p.run(main(p.dir)).stdout, /"value":"from b\.ts, changed"/);
    assert.match(p.compile(), /^compiled 1 of 3 \.ts files/);
    assert.match(readFileSync(copy, "utf8"), /from b\.ts, changed/);
    assert.match(p.run(main(p.dir)).stdout, /"value":"from b\.ts, changed"/);
  } finally {
    p.cleanup();
  }
});

test("a stack trace points at the .ts file and line, from the cache and from a file compiled on the spot", () => {
  const p = project();
  try {
    // Not compiled yet: every file is compiled by the loader itself.
    for (const round of ["on the spot", "from the cache"]) {
      const r = p.run(main(p.dir), "throw");
      assert.is(r.status, 1, `${round}: ${r.stderr}`);
      assert.match(r.stderr, /Error: boom square/, round);
      assert.ok(r.stderr.includes(`at boom (${join(p.dir, "src", "b.ts")}:7:9)`), `${round}: ${r.stderr}`);
      assert.ok(r.stderr.includes(`${join(p.dir, "src", "main.ts")}:5:`), `${round}: ${r.stderr}`);
      p.compile();
    }
  } finally {
    p.cleanup();
  }
});

test.run();
