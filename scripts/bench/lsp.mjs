#!/usr/bin/env node
// LSP diagnostics benchmark (run `npm run build` first):
//   node scripts/bench/lsp.mjs [--iterations 30] [--server typescript|pyright|all]
// For each server, with a warm server: the tool path is `patch` through the real tool registry
// and LSP manager, timed from the end of the write (the moment the manager is handed the
// written file) to the tool result. The baseline, in the same run: the same server binary in
// its own process, driven directly over stdio with vscode-jsonrpc, timed from `didChange` of the
// same new content to its `publishDiagnostics`. The two alternate, change by change, so both
// see the same machine. Prints the medians and the ratio; target: at most 1.3x.
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from "vscode-jsonrpc/node";
import { createToolRegistry } from "../../dist/daemon/agent/tools/index.js";
import { initializeParams } from "../../dist/daemon/lsp/client.js";
import { LspManager } from "../../dist/daemon/lsp/manager.js";
import { CONFIG_DEFAULTS } from "../../dist/shared/config/defaults.js";

const { values } = parseArgs({ options: { iterations: { type: "string" }, server: { type: "string" } } });
const N = Number(values.iterations ?? 30);
const which = values.server ?? "all";
const root = new URL("../..", import.meta.url).pathname;
const bin = (name) => join(root, "node_modules", ".bin", name);
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const quiet = {
  debug() {},
  info() {},
  warn() {},
  error() {},
  component() {
    return quiet;
  },
};

const SERVERS = {
  typescript: {
    command: [bin("typescript-language-server"), "--stdio"],
    file: "bench.ts",
    languageId: "typescript",
    // Change i: a fresh value each time; every other change carries a type error, so every
    // change alters the diagnostics (typescript-language-server publishes only on a change).
    line: (i) => (i % 2 === 0 ? `export const value${i}: number = "x${i}";` : `export const value${i}: number = ${i};`),
    body: Array.from({ length: 60 }, (_, k) => `export function f${k}(a: number): number {\n  return a * ${k};\n}`).join("\n") + "\n",
  },
  pyright: {
    command: [bin("pyright-langserver"), "--stdio"],
    file: "bench.py",
    languageId: "python",
    line: (i) => (i % 2 === 0 ? `value${i}: int = "x${i}"` : `value${i}: int = ${i}`),
    body: Array.from({ length: 60 }, (_, k) => `def f${k}(a: int) -> int:\n    return a * ${k}\n`).join("\n") + "\n",
  },
};

/** A language server driven directly: open a file, then time didChange → publishDiagnostics. */
async function directServer(spec, dir, path, text) {
  const child = spawn(spec.command[0], spec.command.slice(1), { cwd: dir, stdio: ["pipe", "pipe", "ignore"] });
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const uri = pathToFileURL(path).href;
  let waiter = null;
  conn.onNotification("textDocument/publishDiagnostics", (p) => {
    if (p.uri === uri && waiter) waiter(p);
  });
  conn.onRequest((method, params) => (method === "workspace/configuration" ? params.items.map(() => null) : null));
  conn.listen();
  // The same initialize request the daemon's client sends, so the baseline asks for no less.
  await conn.sendRequest("initialize", initializeParams(dir));
  conn.sendNotification("initialized", {});
  let version = 1;
  const published = () =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${spec.file}: no publishDiagnostics within 120 s`)), 120_000);
      waiter = (p) => {
        waiter = null;
        clearTimeout(timer);
        resolve(p);
      };
    });
  const opened = published();
  conn.sendNotification("textDocument/didOpen", { textDocument: { uri, languageId: spec.languageId, version, text } });
  await opened;
  return {
    async change(newText) {
      const done = published();
      const t0 = performance.now();
      conn.sendNotification("textDocument/didChange", { textDocument: { uri, version: ++version }, contentChanges: [{ text: newText }] });
      await done;
      return performance.now() - t0;
    },
    close() {
      conn.dispose();
      child.kill("SIGKILL");
    },
  };
}

async function bench(id) {
  const spec = SERVERS[id];
  const toolDir = mkdtempSync(join(tmpdir(), "lspbench-"));
  const directDir = mkdtempSync(join(tmpdir(), "lspbench-direct-"));
  execFileSync("git", ["init", "-q", toolDir]);
  execFileSync("git", ["init", "-q", directDir]);
  const toolFile = join(toolDir, spec.file);
  const directFile = join(directDir, spec.file);
  const start = `${spec.body}${spec.line(1)}\n`;
  writeFileSync(toolFile, start);
  writeFileSync(directFile, start);
  // Warm-server latency is measured: a loaded machine's slow cold start must not mark it broken.
  const settings = {
    ...structuredClone(CONFIG_DEFAULTS.lsp),
    install_strategy: "off",
    baseline_timeout: 120,
    wait_timeout: 60,
    servers: { [id]: { command: spec.command } },
  };
  const manager = new LspManager({ lspHome: join(toolDir, ".none"), log: quiet, settings: () => settings, env: () => process.env });
  // Time from the end of the write (the manager's `after` step starts) to the tool result.
  let writeEnd = 0;
  const hook = {
    async beforeWrite(path, signal) {
      const pending = await manager.beforeWrite(path, signal);
      return pending && { after: (clean) => ((writeEnd = performance.now()), pending.after(clean)), cancel: pending.cancel };
    },
  };
  const tools = createToolRegistry({ lsp: hook });
  const ctx = { cwd: toolDir, sessionId: "bench", signal: new AbortController().signal, env: process.env };
  process.stderr.write(`${id}: starting both servers\n`);
  const direct = await directServer(spec, directDir, directFile, start);
  let current = spec.line(1);
  const patch = async (i) => {
    const next = spec.line(i);
    const r = await tools.execute("patch", { path: spec.file, search: current, replace: next }, ctx);
    const ms = performance.now() - writeEnd;
    if (!r.ok) throw new Error(JSON.stringify(r.output));
    current = next;
    return { ms, reported: Boolean(r.output.lsp_diagnostics) };
  };
  const toolTimes = [];
  const directTimes = [];
  let reported = 0;
  // Warm-up: start the managed server (baseline) and let both settle.
  process.stderr.write(`${id}: direct server open\n`);
  for (let i = 2; i < 6; i++) {
    process.stderr.write(`${id}: warm-up ${i}\n`);
    await patch(i);
    await direct.change(readFileSync(toolFile, "utf8"));
  }
  process.stderr.write(`${id}: warm, measuring ${N} changes\n`);
  for (let i = 6; i < 6 + N; i++) {
    const t = await patch(i);
    toolTimes.push(t.ms);
    if (t.reported) reported++;
    directTimes.push(await direct.change(readFileSync(toolFile, "utf8")));
  }
  direct.close();
  await tools.close();
  await manager.close();
  rmSync(toolDir, { recursive: true, force: true });
  rmSync(directDir, { recursive: true, force: true });
  const tool = median(toolTimes);
  const base = median(directTimes);
  console.log(
    `${id.padEnd(10)} ${N} changes: end of write → tool result ${tool.toFixed(1)} ms (median), server alone didChange → publish ${base.toFixed(1)} ms (median); ratio ${(tool / base).toFixed(2)}x (target ≤ 1.3x); ${reported} results carried lsp_diagnostics`,
  );
  return tool / base;
}

const ids = which === "all" ? Object.keys(SERVERS) : [which];
for (const id of ids) {
  if (!SERVERS[id]) throw new Error(`unknown server ${id}; use typescript, pyright or all`);
  await bench(id);
}
