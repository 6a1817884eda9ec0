import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { ctxFor, out, tempTree } from "./helpers.js";

const registry = createToolRegistry();
const t = tempTree();
test.after(async () => {
  await registry.close();
  t.cleanup();
});

async function lintOf(name: string, content: string) {
  const r = await registry.execute("write_file", { path: name, content }, ctxFor(t.dir));
  assert.is(r.ok, true, JSON.stringify(r.output));
  return out(r).lint as { status: string; output: string };
}

const CASES: Array<[lang: string, file: string, good: string, bad: string, message: RegExp]> = [
  ["JSON", "a.json", '{"a": [1, 2]}', '{"a": [1, 2}', /a\.json:1:\d+: .*JSON/],
  ["YAML", "a.yaml", "a:\n  - 1\n  - 2\n", "a: [1, 2\nb: }\n", /a\.yaml:\d+:\d+: /],
  ["JavaScript", "a.js", "export const f = (x) => x * 2;\n", "export const f = (x => x * 2;\n", /a\.js:1:\d+: TS\d+: /],
  [
    "TypeScript",
    "a.ts",
    "export function f(x: number): number {\n  return x;\n}\n",
    "export function f(x: number): number {\n  return x;\n",
    /a\.ts:\d+:\d+: TS1005: '}' expected/,
  ],
  ["TSX", "a.tsx", "export const A = () => <div>{1}</div>;\n", "export const A = () => <div>{1</div>;\n", /a\.tsx:1:\d+: TS\d+/],
  ["Python", "a.py", "def f(x):\n    return x\n", "def f(x)\n    return x\n", /a\.py:1:\d+: /],
];

for (const [lang, file, good, bad, message] of CASES) {
  test(`lint reports ok for valid ${lang}`, async () => {
    assert.equal(await lintOf(file, good), { status: "ok", output: "" });
  });
  test(`lint reports a syntax error for broken ${lang}`, async () => {
    const lint = await lintOf(file, bad);
    assert.is(lint.status, "error");
    assert.match(lint.output, message);
  });
}

test("lint is skipped for files it has no checker for", async () => {
  const lint = await lintOf("notes.txt", "anything {");
  assert.is(lint.status, "skipped");
  assert.match(lint.output, /no syntax check for \.txt files/);
});

test("lint is skipped, not failed, when python3 is not on the PATH", async () => {
  const only = await import("../../daemon/pool/tasks/lint.js");
  const saved = process.env.PATH;
  process.env.PATH = "/nonexistent";
  try {
    const lint = await only.lint("x.py", "def (");
    assert.is(lint.status, "skipped");
    assert.match(lint.output, /python3 not found/);
  } finally {
    process.env.PATH = saved;
  }
});

test("patch results carry the lint of the patched file", async () => {
  await lintOf("p.json", '{"a": 1}');
  const r = await registry.execute("patch", { path: "p.json", search: "1}", replace: "1,}" }, ctxFor(t.dir));
  assert.is(r.ok, true);
  assert.is(out(r).lint.status, "error");
  assert.equal(r.mutation, { path: join(t.dir, "p.json"), ok: true });
});

test("lsp diagnostics are added when the hook reports some and the syntax is clean", async () => {
  const seen: string[] = [];
  const withLsp = createToolRegistry({
    lspDiagnostics: async (path) => {
      seen.push(path);
      return path.endsWith("bad.ts") ? "bad.ts:1:7 error TS2322: Type 'string' is not assignable to type 'number'." : undefined;
    },
  });
  try {
    const bad = await withLsp.execute("write_file", { path: "bad.ts", content: 'const x: number = "s";\n' }, ctxFor(t.dir));
    assert.match(out(bad).lsp_diagnostics, /TS2322/);
    const clean = await withLsp.execute("write_file", { path: "ok.ts", content: "const x = 1;\n" }, ctxFor(t.dir));
    assert.not.ok("lsp_diagnostics" in out(clean));
    const broken = await withLsp.execute("write_file", { path: "broken.ts", content: "const = ;\n" }, ctxFor(t.dir));
    assert.is(out(broken).lint.status, "error");
    assert.equal(seen, [join(t.dir, "bad.ts"), join(t.dir, "ok.ts")]);
  } finally {
    await withLsp.close();
  }
});

test.run();
