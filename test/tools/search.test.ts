import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { ctxFor, out, tempTree } from "./helpers.js";

const registry = createToolRegistry();
test.after(() => registry.close());

function paths(r: { output: unknown }): string[] {
  return (out(r).matches as Array<{ path: string }>).map((m) => m.path);
}

test("search_files finds regex matches with file, line and text", async () => {
  const t = tempTree({ "a.ts": "const x = 1;\nfunction needle() {}\n", "b/c.ts": "// needle here\n", "d.md": "nothing\n" });
  try {
    const r = await registry.execute("search_files", { pattern: "need(le|ful)\\b" }, ctxFor(t.dir));
    assert.is(r.ok, true);
    assert.equal(out(r).matches, [
      { path: "a.ts", line: 2, text: "function needle() {}" },
      { path: "b/c.ts", line: 1, text: "// needle here" },
    ]);
    assert.is(out(r).truncated, false);
  } finally {
    t.cleanup();
  }
});

test("search_files respects .gitignore, nested .gitignore files and re-includes", async () => {
  const t = tempTree({
    ".gitignore": "build/\n*.log\n",
    "keep.ts": "hit\n",
    "app.log": "hit\n",
    "build/out.js": "hit\n",
    "pkg/.gitignore": "generated.ts\n!important.log\n",
    "pkg/generated.ts": "hit\n",
    "pkg/src.ts": "hit\n",
    "pkg/important.log": "hit\n",
    "node_modules/lib/index.js": "hit\n",
    ".git/config": "hit\n",
  });
  try {
    const r = await registry.execute("search_files", { pattern: "hit" }, ctxFor(t.dir));
    assert.equal(paths(r), ["keep.ts", "pkg/important.log", "pkg/src.ts"]);
  } finally {
    t.cleanup();
  }
});

test("search_files in a subdirectory applies the repository's outer .gitignore", async () => {
  const t = tempTree({ ".git/HEAD": "ref: refs/heads/main\n", ".gitignore": "*.gen.ts\n", "sub/a.ts": "hit\n", "sub/a.gen.ts": "hit\n" });
  try {
    const r = await registry.execute("search_files", { pattern: "hit", path: "sub" }, ctxFor(t.dir));
    assert.equal(paths(r), ["a.ts"]);
  } finally {
    t.cleanup();
  }
});

test("search_files filters by glob and stops at max_results with a note", async () => {
  const t = tempTree({ "a.ts": "x\nx\nx\n", "b.py": "x\n", "src/c.ts": "x\n" });
  try {
    const ts = await registry.execute("search_files", { pattern: "x", glob: "*.ts" }, ctxFor(t.dir));
    assert.equal([...new Set(paths(ts))], ["a.ts", "src/c.ts"]);
    const capped = await registry.execute("search_files", { pattern: "x", max_results: 2 }, ctxFor(t.dir));
    assert.is(out(capped).matches.length, 2);
    assert.is(out(capped).truncated, true);
    assert.match(out(capped).note, /more matches exist/);
  } finally {
    t.cleanup();
  }
});

test("search_files skips binary files and searches a single file when given one", async () => {
  const t = tempTree({ "bin.dat": Buffer.from("hit\0hit"), "one.txt": "miss\nhit\n" });
  try {
    const all = await registry.execute("search_files", { pattern: "hit" }, ctxFor(t.dir));
    assert.equal(paths(all), ["one.txt"]);
    const one = await registry.execute("search_files", { pattern: "hit", path: "one.txt" }, ctxFor(t.dir));
    assert.equal(out(one).matches, [{ path: "one.txt", line: 2, text: "hit" }]);
  } finally {
    t.cleanup();
  }
});

test("search_files rejects an invalid regular expression with the parser's reason", async () => {
  const t = tempTree();
  try {
    const r = await registry.execute("search_files", { pattern: "a(b" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.match(out(r).error, /invalid regular expression "a\(b": .*Unterminated group/);
  } finally {
    t.cleanup();
  }
});

test("list_files honours .gitignore too", async () => {
  const t = tempTree({ ".gitignore": "dist/\n", "dist/x.js": "", "src/y.ts": "" });
  try {
    const r = await registry.execute("list_files", {}, ctxFor(t.dir));
    assert.equal(out(r).entries, [".gitignore", "src/", "src/y.ts"]);
  } finally {
    t.cleanup();
  }
});

test.run();
