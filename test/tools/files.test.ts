import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import type { MultimodalResult } from "../../daemon/tools/types.js";
import { ctxFor, out, tempTree } from "./helpers.js";

const registry = createToolRegistry();
test.after(() => registry.close());

// 1x1 transparent PNG
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII=", "base64");

test("read_file returns numbered lines with offset and limit and says where to continue", async () => {
  const t = tempTree({ "a.txt": "one\ntwo\nthree\nfour\n" });
  try {
    const r = await registry.execute("read_file", JSON.stringify({ path: "a.txt", offset: 2, limit: 2 }), ctxFor(t.dir));
    assert.is(r.ok, true);
    assert.is(out(r).content, "     2\ttwo\n     3\tthree");
    assert.is(out(r).total_lines, 4);
    assert.is(out(r).next_offset, 4);
    assert.is(out(r).path, join(t.dir, "a.txt"));
    assert.ok(r.durationMs >= 0);
    assert.not.ok("mutation" in r);
  } finally {
    t.cleanup();
  }
});

test("read_file of a missing file fails with a readable error", async () => {
  const t = tempTree();
  try {
    const r = await registry.execute("read_file", { path: "missing.txt" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.is(out(r).error, `file not found: ${join(t.dir, "missing.txt")}`);
  } finally {
    t.cleanup();
  }
});

test("read_file refuses a binary file and a directory", async () => {
  const t = tempTree({ "blob.bin": Buffer.from([1, 2, 0, 3, 4]), "sub/x.txt": "x" });
  try {
    const bin = await registry.execute("read_file", { path: "blob.bin" }, ctxFor(t.dir));
    assert.is(bin.ok, false);
    assert.match(out(bin).error, /binary file \(5 bytes\)/);
    const dir = await registry.execute("read_file", { path: "sub" }, ctxFor(t.dir));
    assert.is(dir.ok, false);
    assert.match(out(dir).error, /is a directory/);
  } finally {
    t.cleanup();
  }
});

test("read_file of an image returns a multimodal result the model can see", async () => {
  const t = tempTree({ "dot.png": PNG, "fake.png": "not an image" });
  try {
    const r = await registry.execute("read_file", { path: "dot.png" }, ctxFor(t.dir));
    assert.is(r.ok, true);
    const mm = r.output as MultimodalResult;
    assert.is(mm._multimodal, true);
    assert.is(mm.content[0]!.type, "text");
    const image = mm.content[1] as { type: "image_url"; image_url: { url: string } };
    assert.is(image.type, "image_url");
    assert.is(image.image_url.url, `data:image/png;base64,${PNG.toString("base64")}`);
    assert.match(mm.text_summary, /dot\.png/);
    const fake = await registry.execute("read_file", { path: "fake.png" }, ctxFor(t.dir));
    assert.is(fake.ok, false);
    assert.match(out(fake).error, /not a PNG, JPEG, GIF or WebP image/);
  } finally {
    t.cleanup();
  }
});

test("write_file creates parent directories and reports bytes written and a mutation", async () => {
  const t = tempTree();
  try {
    const r = await registry.execute("write_file", { path: "deep/er/note.md", content: "héllo\n" }, ctxFor(t.dir));
    assert.is(r.ok, true, JSON.stringify(r.output));
    const file = join(t.dir, "deep/er/note.md");
    assert.is(readFileSync(file, "utf8"), "héllo\n");
    assert.is(out(r).bytes_written, 7);
    assert.equal(out(r).lint, { status: "skipped", output: "no syntax check for .md files" });
    assert.not.ok("lsp_diagnostics" in out(r));
    assert.equal(r.mutation, { path: file, ok: true });
  } finally {
    t.cleanup();
  }
});

test("write_file onto a directory fails and reports a failed mutation", async () => {
  const t = tempTree({ "sub/x.txt": "x" });
  try {
    const r = await registry.execute("write_file", { path: "sub", content: "x" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.match(out(r).error, /is a directory/);
    assert.equal(r.mutation, { path: join(t.dir, "sub"), ok: false });
  } finally {
    t.cleanup();
  }
});

test("patch replaces the one exact occurrence, literally", async () => {
  const t = tempTree({ "a.txt": "alpha\nbeta\ngamma\n" });
  try {
    const r = await registry.execute("patch", { path: "a.txt", search: "beta\n", replace: "$& BETA $1\n" }, ctxFor(t.dir));
    assert.is(r.ok, true, JSON.stringify(r.output));
    assert.is(readFileSync(join(t.dir, "a.txt"), "utf8"), "alpha\n$& BETA $1\ngamma\n");
    assert.is(out(r).bytes_written, statSync(join(t.dir, "a.txt")).size);
    assert.equal(r.mutation, { path: join(t.dir, "a.txt"), ok: true });
  } finally {
    t.cleanup();
  }
});

test("patch with absent search text fails, says so, and leaves the file unchanged", async () => {
  const original = "function f() {\n    return 1;\n}\n";
  const t = tempTree({ "f.js": original });
  try {
    const before = statSync(join(t.dir, "f.js")).mtimeMs;
    const r = await registry.execute("patch", { path: "f.js", search: "return 2;", replace: "return 3;" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.is(out(r).code, "search_not_found");
    assert.match(out(r).error, /search text was not found in .*f\.js; the file is unchanged/);
    assert.is(readFileSync(join(t.dir, "f.js"), "utf8"), original);
    assert.is(statSync(join(t.dir, "f.js")).mtimeMs, before);
    assert.equal(r.mutation, { path: join(t.dir, "f.js"), ok: false });
  } finally {
    t.cleanup();
  }
});

test("patch whose search text differs only in indentation points at the line", async () => {
  const t = tempTree({ "f.py": "def f():\n    return 1\n" });
  try {
    const r = await registry.execute("patch", { path: "f.py", search: "def f():\n  return 1", replace: "def f():\n  return 2" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.match(out(r).error, /starts at line 1/);
  } finally {
    t.cleanup();
  }
});

test("patch with ambiguous search text says how many times it appears and leaves the file unchanged", async () => {
  const original = "x = 1\ny = 2\nx = 1\nz = 3\nx = 1\n";
  const t = tempTree({ "v.py": original });
  try {
    const r = await registry.execute("patch", { path: "v.py", search: "x = 1", replace: "x = 9" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.is(out(r).code, "search_ambiguous");
    assert.match(out(r).error, /appears 3 times in .*v\.py \(at lines 1, 3, 5\)/);
    assert.is(readFileSync(join(t.dir, "v.py"), "utf8"), original);
    assert.equal(r.mutation, { path: join(t.dir, "v.py"), ok: false });
  } finally {
    t.cleanup();
  }
});

test("patch matches a CRLF file with LF search text and keeps CRLF line endings", async () => {
  const t = tempTree({ "w.txt": "a\r\nb\r\nc\r\n" });
  try {
    const r = await registry.execute("patch", { path: "w.txt", search: "a\nb", replace: "a\nB\nb" }, ctxFor(t.dir));
    assert.is(r.ok, true, JSON.stringify(r.output));
    assert.is(readFileSync(join(t.dir, "w.txt"), "utf8"), "a\r\nB\r\nb\r\nc\r\n");
  } finally {
    t.cleanup();
  }
});

test("patch of a missing file fails without creating it", async () => {
  const t = tempTree();
  try {
    const r = await registry.execute("patch", { path: "nope.txt", search: "a", replace: "b" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.match(out(r).error, /file not found/);
    assert.not.ok(existsSync(join(t.dir, "nope.txt")));
  } finally {
    t.cleanup();
  }
});

test("invalid arguments are rejected with a message naming the field, and the edit counts as failed", async () => {
  const t = tempTree();
  try {
    const r = await registry.execute("patch", { path: "a.txt", search: "" }, ctxFor(t.dir));
    assert.is(r.ok, false);
    assert.is(out(r).code, "invalid_arguments");
    assert.match(out(r).error, /invalid arguments for patch: search: search must not be empty; replace: .*expected string/);
    assert.equal(r.mutation, { path: join(t.dir, "a.txt"), ok: false });
    const bad = await registry.execute("read_file", "{not json", ctxFor(t.dir));
    assert.match(out(bad).error, /arguments for read_file are not valid JSON/);
  } finally {
    t.cleanup();
  }
});

test("an unknown tool fails with the list of available tools", async () => {
  const r = await registry.execute("rm_rf", {}, ctxFor("/"));
  assert.is(r.ok, false);
  assert.match(out(r).error, /unknown tool: rm_rf\. Available tools: read_file, write_file, patch, list_files, search_files, terminal/);
});

test("list_files lists a tree to the given depth with directories marked", async () => {
  const t = tempTree({ "a.txt": "", "src/b.ts": "", "src/deep/c.ts": "", "node_modules/x/index.js": "" });
  try {
    const r = await registry.execute("list_files", { depth: 2 }, ctxFor(t.dir));
    assert.is(r.ok, true);
    assert.equal(out(r).entries, ["a.txt", "src/", "src/b.ts", "src/deep/"]);
    const missing = await registry.execute("list_files", { path: "nope" }, ctxFor(t.dir));
    assert.is(missing.ok, false);
    assert.match(out(missing).error, /not found/);
  } finally {
    t.cleanup();
  }
});

test("the registry exposes each tool's JSON schema and toolset, filtered by enabled toolsets", async () => {
  const specs = registry.specs();
  const patch = specs.find((s) => s.name === "patch")!;
  assert.is(patch.toolset, "file");
  assert.equal((patch.parameters as { required: string[] }).required, ["path", "search", "replace"]);
  assert.not.ok("$schema" in patch.parameters);
  const only = createToolRegistry({ toolsets: ["search"] });
  try {
    assert.equal(
      only.specs().map((s) => s.name),
      ["search_files"],
    );
    const r = await only.execute("read_file", { path: "x" }, ctxFor("/"));
    assert.match(out(r).error, /tool not available here: read_file/);
  } finally {
    await only.close();
  }
});

test("an interrupted turn does not run the tool", async () => {
  const t = tempTree();
  try {
    const ac = new AbortController();
    ac.abort();
    const r = await registry.execute("write_file", { path: "x.txt", content: "x" }, ctxFor(t.dir, { signal: ac.signal }));
    assert.is(r.ok, false);
    assert.is(out(r).code, "interrupted");
    assert.not.ok(existsSync(join(t.dir, "x.txt")));
  } finally {
    t.cleanup();
  }
});

test.run();
