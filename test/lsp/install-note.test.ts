import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { tempRepo } from "./helpers.js";

/**
 * A write while the file's language server is missing says why it has no diagnostics, and
 * `agent lsp which` tells the install state as it is. npm is a stand-in on the daemon's PATH
 * that "installs" until the test lets it fail, so nothing is downloaded.
 */

const repo = tempRepo("lspnote");
const bin = join(repo.dir, "..", `${repo.dir.split("/").pop()}-bin`);
mkdirSync(bin);
const release = join(bin, "release");
writeFileSync(join(bin, "npm"), `#!/bin/sh\nwhile [ ! -f "${release}" ]; do sleep 0.05; done\necho "npm ERR! fake failure" >&2\nexit 1\n`);
chmodSync(join(bin, "npm"), 0o755);
const PATH = `${bin}:${dirname(process.execPath)}:/usr/bin:/bin`;
const h = await chatHome({}, `lsp:\n  install_strategy: auto\n`);
h.env.PATH = PATH;

test.after(async () => {
  writeFileSync(release, "");
  await h.dispose();
  repo.cleanup();
});

async function which(file: string): Promise<{ tier: string; reason: string }> {
  const r = await h.cli(["lsp", "which", file, "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

test("before any write, lsp which does not claim an install is running", async () => {
  const r = await which(join(repo.dir, "a.ts"));
  assert.is(r.tier, "syntax");
  assert.match(r.reason, /typescript is not installed: the next write of such a file installs it/);
  assert.not.match(r.reason, /being installed/);
  const status = JSON.parse((await h.cli(["lsp", "status", "--json"])).stdout);
  assert.equal(status.installing, []);
});

test("the first write while the server is missing says it is being installed, in the tool result", async () => {
  const file = join(repo.dir, "a.ts");
  h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: file, content: "export const n: number = 1;\n" } }] }, { text: "Written." }]);
  const r = await h.chat(["-q", "write it"], { timeoutMs: 30_000 });
  assert.is(r.code, 0, r.stderr);
  const result = JSON.parse(toolMessages(h.fake, 1)[0]!.content);
  assert.is(result.lsp_diagnostics, undefined);
  assert.match(result.lsp_note, /no language-server diagnostics for this write: typescript is not installed yet: it is being installed/);
  assert.match(result.lsp_note, /diagnostics come with the writes after that/);
  assert.ok(existsSync(file));

  const now = await which(file);
  assert.match(now.reason, /being installed into \$AGENT_HOME\/lsp now/);
  const status = JSON.parse((await h.cli(["lsp", "status", "--json"])).stdout);
  assert.is(status.installing.length, 1);
});

test("once the install has failed, lsp which says so instead of claiming it still runs", async () => {
  writeFileSync(release, "");
  const file = join(repo.dir, "a.ts");
  const last = await waitFor("lsp which to report the failed install", async () => {
    const r = await which(file);
    return /automatic install failed/.test(r.reason) && r;
  });
  assert.match(last.reason, /retry with agent lsp install typescript/);
  assert.not.match(last.reason, /being installed/);
});

test.run();
