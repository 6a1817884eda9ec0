// The lsp settings as a user sets them (config.yaml, `agent config set`) and sees their effect
// (`agent lsp which|status`, the write_file result of a chat turn), with the fake language
// server (test/fixtures/fake-lsp-server.mjs) standing in for typescript: lsp.enabled: false,
// lsp.wait_mode, the per-server disabled, env and initialization_options, and the 64-step walk
// up to the git worktree.
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { FAKE_LSP, tempRepo } from "./helpers.js";

const repo = tempRepo("lspset");
const log = join(repo.dir, "..", `${repo.dir.split("/").pop()}-lsp.log`);
const h = await chatHome(
  {},
  [
    "lsp:",
    '  install_strategy: "off"',
    "  wait_timeout: 5",
    "  servers:",
    "    typescript:",
    `      command: ${JSON.stringify([process.execPath, FAKE_LSP, "late-error"])}`,
    `      env: ${JSON.stringify({ FAKE_LSP_LOG: log, FAKE_LSP_MARK: "set-in-config" })}`,
    `      initialization_options: ${JSON.stringify({ marker: "from-config", nested: { n: 1 } })}`,
    "",
  ].join("\n"),
);

test.after(async () => {
  await h.dispose();
  repo.cleanup();
});

const logged = (): Array<{ method: string; initializationOptions?: unknown; mark?: string | null }> => {
  try {
    return readFileSync(log, "utf8")
      .trim()
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l));
  } catch {
    return [];
  }
};
const initializes = () => logged().filter((m) => m.method === "initialize");

async function cli(args: string[]) {
  const r = await h.cli(args);
  assert.is(r.code, 0, `agent ${args.join(" ")}: ${r.stderr}`);
  return r;
}
const json = async (args: string[]) => JSON.parse((await cli([...args, "--json"])).stdout);

/** One chat turn whose model writes `file`; the write_file result the model read. */
async function write(file: string, content: string): Promise<Record<string, unknown>> {
  h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: file, content } }] }, { text: "Written." }]);
  const r = await h.chat(["-q", "write it"], { timeoutMs: 30_000 });
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(toolMessages(h.fake, h.fake.requests.length - 1)[0]!.content);
}

const file = join(repo.dir, "main.ts");
writeFileSync(file, "export const n = 1;\n");

test("env and initialization_options of a server override reach the server it starts", async () => {
  await write(file, "export const n = 2;\n");
  const [init] = initializes();
  assert.ok(init, "the server was started (its log is written through the env override)");
  assert.equal(init!.initializationOptions, { marker: "from-config", nested: { n: 1 } });
  assert.is(init!.mark, "set-in-config");
});

test("wait_mode block takes the server's first diagnostics; settle waits until it is quiet", async () => {
  // For a text with LATE in it, the fake publishes "no errors" at once, then an error 100 ms later.
  const blocked = await write(file, "export const LATE = 3;\n");
  assert.is(blocked.lsp_diagnostics, undefined, JSON.stringify(blocked));
  await cli(["config", "set", "lsp.wait_mode", "settle"]);
  try {
    // A clean text first, so the next write's baseline has no error (an old error is not reported again).
    assert.is((await write(file, "export const n = 4;\n")).lsp_diagnostics, undefined);
    const settled = await write(file, "export const LATE = 4;\n");
    assert.is(settled.lsp_diagnostics, "ERROR [1:1] late error (fake)");
  } finally {
    await cli(["config", "set", "lsp.wait_mode", "block"]);
  }
});

test("a server with disabled: true is skipped: lsp which says why and a write starts nothing", async () => {
  await cli(["lsp", "restart"]);
  const before = initializes().length;
  await cli(["config", "set", "lsp.servers.typescript.disabled", "true"]);
  try {
    const which = await cli(["lsp", "which", file]);
    assert.match(which.stdout, /lsp\.servers\.typescript\.disabled is true/);
    const r = await write(file, "export const n = 5;\n");
    assert.is(r.lsp_diagnostics, undefined);
    assert.is(initializes().length, before, "no server started");
    assert.equal((await json(["lsp", "status"])).servers, []);
  } finally {
    await cli(["config", "set", "lsp.servers.typescript.disabled", "false"]);
  }
  assert.is((await json(["lsp", "which", file])).tier, "lsp");
});

test("lsp.enabled: false turns the language servers off: syntax checks only", async () => {
  await cli(["lsp", "restart"]);
  const before = initializes().length;
  await cli(["config", "set", "lsp.enabled", "false"]);
  try {
    assert.is((await json(["lsp", "status"])).enabled, false);
    const which = await cli(["lsp", "which", file]);
    assert.match(which.stdout, /lsp\.enabled is false/);
    const r = await write(file, "export const n = 6;\n");
    assert.is(r.lsp_diagnostics, undefined);
    assert.is(initializes().length, before, "no server started");
  } finally {
    await cli(["config", "set", "lsp.enabled", "true"]);
  }
});

test("the walk up to the worktree takes 64 steps: a file 64 levels below the root is served, one 65 levels below gets the syntax check", async () => {
  // A file n levels below the root: n - 1 folders, then the file.
  const deep = (n: number) => join(repo.dir, ...Array.from({ length: n - 1 }, () => "d"), "deep.ts");
  mkdirSync(join(deep(65), ".."), { recursive: true });
  const at64 = await json(["lsp", "which", deep(64)]);
  assert.is(at64.tier, "lsp");
  assert.is(at64.workspace, repo.dir);
  const at65 = await json(["lsp", "which", deep(65)]);
  assert.is.not(at65.tier, "lsp");
  assert.is(at65.workspace, null);
  assert.match((await cli(["lsp", "which", deep(65)])).stdout, /not inside a git worktree/);
  // And a write there: the syntax check runs (a syntax error is reported), no server starts.
  await cli(["lsp", "restart"]);
  const before = initializes().length;
  const r = (await write(deep(65), "export const = ;\n")) as { lint?: { status: string; output: string }; lsp_diagnostics?: string };
  assert.is(r.lint?.status, "error", JSON.stringify(r));
  assert.match(r.lint!.output, /TS1134/);
  assert.is(r.lsp_diagnostics, undefined);
  assert.is(initializes().length, before);
});

test.run();
