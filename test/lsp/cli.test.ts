import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { tempDir, tempRepo, TSLS } from "./helpers.js";

// One daemon for the file, its typescript server configured to the pinned dev dependency.
const h = await chatHome(
  {},
  `lsp:\n  install_strategy: "off"\n  baseline_timeout: 60\n  wait_timeout: 30\n  servers:\n    typescript:\n      command: ${JSON.stringify(TSLS)}\n`,
);
const repo = tempRepo("lspcli");
const loose = tempDir("lspcli");

test.after(async () => {
  await h.dispose();
  repo.cleanup();
  loose.cleanup();
});

async function json(args: string[]) {
  const r = await h.cli([...args, "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("agent lsp list shows every known server and which are installed", async () => {
  const list = (await json(["lsp", "list"])).servers;
  assert.equal(
    list.map((s: { id: string }) => s.id),
    ["typescript", "pyright", "json", "yaml", "css", "html", "bash"],
  );
  const ts = list.find((s: { id: string }) => s.id === "typescript");
  assert.is(ts.installed, true);
  assert.is(ts.source, "config");
  assert.equal(ts.command, TSLS);
  assert.ok(ts.extensions.includes(".tsx"));
});

test("agent lsp which names the server and the workspace of a file in a git worktree", async () => {
  const r = await json(["lsp", "which", join(repo.dir, "src", "a.ts")]);
  assert.is(r.tier, "lsp");
  assert.is(r.server, "typescript");
  assert.is(r.workspace, repo.dir);
  assert.is(r.matched_by, "extension .ts");
});

test("agent lsp which says why a file outside a git worktree gets only the syntax check", async () => {
  const r = await h.cli(["lsp", "which", join(loose.dir, "a.ts")]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /syntax check only \(typescript would serve it\)/);
  assert.match(r.stdout, /not inside a git worktree/);
});

test("a chat write_file that introduces a type error gives the model lsp_diagnostics", async () => {
  const file = join(repo.dir, "main.ts");
  writeFileSync(file, "export const n: number = 1;\n");
  h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: file, content: 'export const n: number = "one";\n' } }] }, { text: "Written." }]);
  const r = await h.chat(["-q", "write it"], { timeoutMs: 60_000 });
  assert.is(r.code, 0, r.stderr);
  const result = JSON.parse(toolMessages(h.fake, 1)[0]!.content);
  assert.is(result.lsp_diagnostics, "ERROR [1:14] Type 'string' is not assignable to type 'number'. [2322] (typescript)");
});

test("agent lsp status shows the running server for the worktree", async () => {
  const r = await json(["lsp", "status"]);
  assert.is(r.enabled, true);
  assert.is(r.install_strategy, "off");
  assert.equal(
    r.servers.map((s: { id: string; root: string; state: string }) => [s.id, s.root, s.state]),
    [["typescript", repo.dir, "ready"]],
  );
  assert.equal(r.broken, []);
});

test("agent lsp restart stops the servers", async () => {
  const r = await json(["lsp", "restart"]);
  assert.equal(r.stopped, [{ id: "typescript", root: repo.dir }]);
  assert.equal((await json(["lsp", "status"])).servers, []);
});

test("agent lsp install of an unknown server fails with a clear error", async () => {
  const r = await h.cli(["lsp", "install", "cobol"]);
  assert.is(r.code, 4);
  assert.match(r.stderr, /unknown language server "cobol"; known: typescript, pyright/);
});

test("agent lsp install is refused when lsp.install_strategy is off", async () => {
  const r = await h.cli(["lsp", "install", "pyright"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /lsp.install_strategy is off/);
});

test.run();
