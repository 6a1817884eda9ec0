import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { LspManager } from "../../daemon/lsp/manager.js";
import { ctxFor, out } from "../tools/helpers.js";
import { lspSettings, memoryLogger, PYRIGHT, tempDir, tempRepo, TSLS } from "./helpers.js";

// One pair of real servers (typescript-language-server + typescript 6.0.3, pyright) for the
// whole file, in one git worktree: each test uses its own files.
const repo = tempRepo();
const outside = tempDir();
const manager = new LspManager({
  lspHome: join(repo.dir, ".no-lsp-home"),
  log: memoryLogger(),
  // Generous bounds: on a loaded machine a cold tsserver takes many seconds; waits end on events.
  settings: () => lspSettings({ baseline_timeout: 60, wait_timeout: 30, servers: { typescript: { command: TSLS }, pyright: { command: PYRIGHT } } }),
  env: () => process.env,
});
const tools = createToolRegistry({ lsp: manager });
const ctx = ctxFor(repo.dir);

async function write(path: string, content: string) {
  const r = await tools.execute("write_file", { path, content }, ctx);
  assert.is(r.ok, true, JSON.stringify(r.output));
  return out(r);
}

async function patch(path: string, search: string, replace: string) {
  const r = await tools.execute("patch", { path, search, replace }, ctx);
  assert.is(r.ok, true, JSON.stringify(r.output));
  return out(r);
}

test.after(async () => {
  await tools.close();
  await manager.close();
  repo.cleanup();
  outside.cleanup();
});

test("an edit that introduces a type error reports it", async () => {
  const first = await write("intro.ts", "export const a: number = 1;\nexport const b = 2;\n");
  assert.not.ok("lsp_diagnostics" in first);
  const r = await patch("intro.ts", "export const b = 2;", 'export const b: number = "two";');
  assert.is(r.lsp_diagnostics, "ERROR [2:14] Type 'string' is not assignable to type 'number'. [2322] (typescript)");
});

test("an edit elsewhere in a file with an old error reports nothing", async () => {
  await write("old.ts", 'export const bad: number = "x";\nexport const ok = 1;\n');
  const r = await patch("old.ts", "export const ok = 1;", "export const ok = 2;");
  assert.is(r.lint.status, "ok");
  assert.not.ok("lsp_diagnostics" in r, r.lsp_diagnostics);
});

test("a line shift does not re-report old errors", async () => {
  await write("shift.ts", 'export const bad: number = "x";\n');
  const r = await patch("shift.ts", 'export const bad: number = "x";', '// one\n// two\n// three\nexport const bad: number = "x";');
  assert.not.ok("lsp_diagnostics" in r, r.lsp_diagnostics);
});

test("a new instance of an old error is reported, the old one is not", async () => {
  await write("again.ts", 'export const bad: number = "x";\n');
  const r = await patch("again.ts", 'export const bad: number = "x";', 'export const bad: number = "x";\nexport const worse: number = "y";');
  assert.is(r.lsp_diagnostics, "ERROR [2:14] Type 'string' is not assignable to type 'number'. [2322] (typescript)");
});

test("a syntax error skips the language server", async () => {
  await write("syntax.ts", "export const fine = 1;\n");
  // The server would report this (TS1109, severity 1); the syntax check catches it first.
  const r = await patch("syntax.ts", "export const fine = 1;", "export const fine = ;");
  assert.is(r.lint.status, "error");
  assert.not.ok("lsp_diagnostics" in r);
});

test("more than 20 errors are capped with a count of the rest", async () => {
  const lines = Array.from({ length: 25 }, (_, i) => `export const v${i}: number = "s${i}";`).join("\n") + "\n";
  const r = await write("many.ts", lines);
  const shown = (r.lsp_diagnostics as string).split("\n");
  assert.is(shown.length, 21);
  assert.ok(shown.slice(0, 20).every((l) => l.startsWith("ERROR [")));
  assert.is(shown[0], "ERROR [1:14] Type 'string' is not assignable to type 'number'. [2322] (typescript)");
  assert.is(shown[20], "and 5 more");
});

test("a file outside a git worktree gets no language-server tier", async () => {
  const path = join(outside.dir, "loose.ts");
  const r = await tools.execute("write_file", { path, content: 'export const bad: number = "x";\n' }, ctxFor(outside.dir));
  assert.is(r.ok, true);
  assert.is(out(r).lint.status, "ok");
  assert.not.ok("lsp_diagnostics" in out(r));
  const which = manager.which(path);
  assert.is(which.tier, "syntax");
  assert.match(which.reason, /not inside a git worktree/);
});

test("a Python edit that introduces a type error is reported by pyright", async () => {
  writeFileSync(join(repo.dir, "mod.py"), "x: int = 1\n");
  const r = await patch("mod.py", "x: int = 1", 'x: int = "one"');
  assert.match(r.lsp_diagnostics, /^ERROR \[1:10\] Type "Literal\['one'\]" is not assignable to declared type "int".* \[reportAssignmentType\] \(Pyright\)$/);
});

test("both servers run in the worktree, one per server", async () => {
  const status = manager.status();
  assert.equal(status.servers.map((s) => [s.id, s.root, s.state]).sort(), [
    ["pyright", repo.dir, "ready"],
    ["typescript", repo.dir, "ready"],
  ]);
  assert.equal(status.broken, []);
});

test.run();
