import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { cleanMessage, formatDiagnostic } from "../../daemon/lsp/diagnostics.js";
import { lspMessageReader } from "../../daemon/lsp/client.js";
import { LspManager, type Clock } from "../../daemon/lsp/manager.js";
import { ManualClock } from "../../shared/clock.js";
import { ctxFor, out } from "../tools/helpers.js";
import { FAKE_LSP, lspSettings, memoryLogger, tempRepo } from "./helpers.js";

// Misbehaving servers from test/fixtures/fake-lsp-server.mjs, serving YAML files here.
const fake = (mode: string) => ({ yaml: { command: [process.execPath, FAKE_LSP, mode] } });

function setup(mode: string, clock?: Clock) {
  const log = memoryLogger();
  const a = tempRepo("lspa");
  const b = tempRepo("lspb");
  const manager = new LspManager({
    lspHome: join(a.dir, ".none"),
    log,
    // A short first-baseline timeout keeps the silent-server tests fast (the default is 8 s).
    // Servers that do answer get a long one: a loaded machine can take over a second just to
    // start Node, and their tests are about what they answer, not about the timeout.
    settings: () => lspSettings({ baseline_timeout: mode === "silent" ? 0.8 : 20, servers: fake(mode) }),
    env: () => process.env,
    clock,
  });
  const tools = createToolRegistry({ lsp: manager });
  return {
    a: a.dir,
    b: b.dir,
    manager,
    tools,
    log,
    dispose: async () => {
      await tools.close();
      await manager.close();
      a.cleanup();
      b.cleanup();
    },
  };
}

test("a server that never answers is marked broken after the baseline timeout and the write still succeeds promptly", async () => {
  const h = setup("silent");
  try {
    const started = performance.now();
    const r = await h.tools.execute("write_file", { path: "c.yaml", content: "a: 1\n" }, ctxFor(h.a));
    const ms = performance.now() - started;
    assert.is(r.ok, true);
    assert.is(readFileSync(join(h.a, "c.yaml"), "utf8"), "a: 1\n");
    assert.not.ok("lsp_diagnostics" in out(r));
    // The write says why it has no diagnostics instead of saying nothing.
    assert.match(
      (out(r) as { lsp_note?: string }).lsp_note ?? "",
      /no language-server diagnostics for this write: yaml did not start in time and is marked broken for this project \(agent lsp restart yaml\)/,
    );
    // Bounded by the 0.8 s baseline timeout, not by the silent server: generous for a loaded machine.
    assert.ok(ms < 6_000, `the write took ${ms} ms`);
    const status = h.manager.status();
    assert.equal(
      status.broken.map((x) => [x.id, x.root]),
      [["yaml", h.a]],
    );
    assert.match(status.broken[0]!.reason, /no baseline within 800 ms/);
    assert.equal(status.servers, []);
    // The next write in that project does not wait for the server again.
    const t2 = performance.now();
    const r2 = await h.tools.execute("write_file", { path: "c.yaml", content: "a: 2\n" }, ctxFor(h.a));
    assert.ok(performance.now() - t2 < 500);
    assert.match((out(r2) as { lsp_note?: string }).lsp_note ?? "", /yaml marked broken for this project/);
    assert.match(h.manager.which(join(h.a, "c.yaml")).reason, /marked broken for this project/);
  } finally {
    await h.dispose();
  }
});

test("a broken mark holds for its project only, and restart clears it", async () => {
  const h = setup("silent");
  try {
    await h.tools.execute("write_file", { path: "c.yaml", content: "a: 1\n" }, ctxFor(h.a));
    assert.is(h.manager.which(join(h.a, "c.yaml")).tier, "syntax");
    assert.is(h.manager.which(join(h.b, "c.yaml")).tier, "lsp");
    const r = await h.manager.restart("yaml");
    assert.equal(r.cleared, [{ id: "yaml", root: h.a }]);
    assert.is(h.manager.which(join(h.a, "c.yaml")).tier, "lsp");
  } finally {
    await h.dispose();
  }
});

test("a header block over 8 KiB is a protocol error that marks the server broken", async () => {
  const h = setup("big-header");
  try {
    const r = await h.tools.execute("write_file", { path: "d.yaml", content: "a: 1\n" }, ctxFor(h.a));
    assert.is(r.ok, true);
    assert.not.ok("lsp_diagnostics" in out(r));
    const broken = h.manager.status().broken;
    assert.is(broken.length, 1);
    assert.match(broken[0]!.reason, /header block over 8192 bytes/);
  } finally {
    await h.dispose();
  }
});

test("a well-framed body that is not JSON is a protocol error that marks the server broken", async () => {
  const h = setup("not-json");
  try {
    const r = await h.tools.execute("write_file", { path: "d.yaml", content: "a: 1\n" }, ctxFor(h.a));
    assert.is(r.ok, true);
    assert.not.ok("lsp_diagnostics" in out(r));
    const broken = h.manager.status().broken;
    assert.is(broken.length, 1);
    assert.match(broken[0]!.reason, /could not be read/);
  } finally {
    await h.dispose();
  }
});

test("a server idle for 10 minutes is stopped, and a later write starts it again", async () => {
  const clock = new ManualClock(1_000_000);
  const h = setup("minimal", clock);
  try {
    writeFileSync(join(h.a, "e.yaml"), "a: 1\n");
    await h.tools.execute("patch", { path: "e.yaml", search: "1", replace: "2" }, ctxFor(h.a));
    assert.equal(
      h.manager.status().servers.map((s) => [s.id, s.state]),
      [["yaml", "ready"]],
    );
    clock.advance(9 * 60_000);
    assert.equal(await h.manager.stopIdle(), []);
    clock.advance(60_000);
    assert.equal(await h.manager.stopIdle(), ["yaml"]);
    assert.equal(h.manager.status().servers, []);
    await h.tools.execute("patch", { path: "e.yaml", search: "2", replace: "3" }, ctxFor(h.a));
    assert.equal(
      h.manager.status().servers.map((s) => s.state),
      ["ready"],
    );
  } finally {
    await h.dispose();
  }
});

test("the reader passes framed messages split across chunks", async () => {
  const stream = new PassThrough();
  const reader = lspMessageReader(stream);
  const got: unknown[] = [];
  reader.listen((m) => got.push(m));
  const body = JSON.stringify({ jsonrpc: "2.0", method: "x", params: { s: "é" } });
  const frame = Buffer.from(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
  stream.write(frame.subarray(0, 10));
  stream.write(Buffer.concat([frame.subarray(10), frame]));
  await new Promise((r) => setImmediate(r));
  assert.equal(got, [JSON.parse(body), JSON.parse(body)]);
});

test("the reader refuses a header block that never ends once it passes 8 KiB", async () => {
  const stream = new PassThrough();
  const reader = lspMessageReader(stream);
  const errors: Error[] = [];
  reader.onError((e) => errors.push(e));
  reader.listen(() => assert.unreachable("no message"));
  stream.write(Buffer.from("X-Junk: " + "y".repeat(9000)));
  await new Promise((r) => setImmediate(r));
  assert.is(errors.length, 1);
  assert.match(errors[0]!.message, /header block over 8192 bytes/);
});

test("diagnostic messages lose control characters and are bounded", () => {
  assert.is(cleanMessage("a\nb\tc\u001b[31m\u202e"), "a b c\\u001b[31m\\u202e");
  assert.is(cleanMessage("x".repeat(1000)).length, 400);
  const line = formatDiagnostic({
    range: { start: { line: 4, character: 2 }, end: { line: 4, character: 3 } },
    severity: 1,
    message: "bad\r\nthing",
    code: 7,
    source: "src",
  });
  assert.is(line, "ERROR [5:3] bad thing [7] (src)");
});

test.run();
