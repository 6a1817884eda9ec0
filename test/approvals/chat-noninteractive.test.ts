import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";

// `agent chat -q` run by the test has no terminal: approval questions get the non-interactive rules.

function victim(): { dir: string; marker: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "appr-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep me");
  return { dir, marker, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const rmScript = (dir: string) => [{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] }, { text: "finished" }];

test("a dangerous command in chat -q without a terminal is denied, naming approvals.non_interactive", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n");
  const v = victim();
  try {
    h.fake.setScript(rmScript(v.dir));
    const r = await h.chat(["-q", "clean the build"]);
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(v.marker), "the command did not run");
    const seen = toolMessages(h.fake, 1)[0]!.content;
    assert.match(seen, /denied: dangerous command needs approval \(dangerous command: recursive delete\)/);
    assert.match(seen, /approvals\.non_interactive: deny/);
    // The person who piped the command is told too, on stderr, not only the model.
    assert.match(r.stderr, /agent: not run: .*rm -rf \.\/build.*approvals\.non_interactive: deny/);
    // An ordinary command still runs unasked in smart mode.
    h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "echo fine > ok.txt", cwd: v.dir } }] }, { text: "ok" }]);
    const r2 = await h.chat(["-q", "say fine"]);
    assert.is(r2.code, 0, r2.stderr);
    assert.ok(existsSync(join(v.dir, "ok.txt")));
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("a write outside the workspace is denied in chat -q without a terminal", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n");
  const v = victim();
  try {
    const target = join(v.dir, "outside.txt");
    h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: target, content: "x" } }] }, { text: "done" }]);
    const r = await h.chat(["-q", "write it"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(target));
    assert.match(toolMessages(h.fake, 1)[0]!.content, /write outside the workspace needs approval.*approvals\.non_interactive: deny/);
    // The denied write is an edit that did not happen: the answer's footer names it.
    assert.match(r.stdout, /left unchanged/);
    assert.ok(r.stdout.includes(target));
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("with approvals.non_interactive: allow the dangerous command runs", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n  non_interactive: allow\n");
  const v = victim();
  try {
    h.fake.setScript(rmScript(v.dir));
    const r = await h.chat(["-q", "clean the build"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(v.marker), "the command ran");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /"exit_code":0/);
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("--yolo runs it without asking", async () => {
  const h = await chatHome({}, "approvals:\n  mode: ask\n");
  const v = victim();
  try {
    h.fake.setScript(rmScript(v.dir));
    const r = await h.chat(["-q", "clean the build", "--yolo"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(v.marker), "the command ran");
  } finally {
    v.cleanup();
    await h.dispose();
  }
});

test("a bad approvals value in config.yaml is refused clearly", async () => {
  const h = await chatHome({}, "approvals:\n  mode: sometimes\n");
  try {
    const r = await h.chat(["-q", "hi"]);
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /approvals\.mode must be one of ask, smart, off/);
  } finally {
    await h.dispose();
  }
});

test("agent approvals: bad input is refused with a usage error and changes nothing", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n");
  try {
    for (const args of [
      ["approvals"],
      ["approvals", "forget"],
      ["approvals", "revoke"],
      ["approvals", "revoke", "a", "b"],
      ["approvals", "revoke", "x", "--all"],
      ["approvals", "answer", "ap_1", "maybe"],
      ["approvals", "answer", "ap_1", "once", "--reason", "why"],
      ["approvals", "list", "extra"],
    ]) {
      const r = await h.cli(args);
      assert.is(r.code, 2, `${args.join(" ")}: ${r.stderr}`);
    }
    const unknown = await h.cli(["approvals", "answer", "ap_nope", "once"]);
    assert.is(unknown.code, 4, unknown.stderr);
    assert.match(unknown.stderr, /no approval question "ap_nope" is waiting/);
    const none = await h.cli(["approvals", "revoke", "command:ls"]);
    assert.is(none.code, 4);
    const list = await h.cli(["approvals", "list", "--json"]);
    assert.equal(JSON.parse(list.stdout).approvals, []);
    const all = await h.cli(["approvals", "revoke", "--all"]);
    assert.is(all.code, 0, all.stderr);
    assert.match(all.stdout, /had none/);
    const bad = await h.cli(["config", "set", "approvals.dangerous_patterns", '{"broken":"(x"}']);
    assert.is.not(bad.code, 0);
    assert.match(bad.stderr, /invalid regular expression for "broken"/);
    const good = await h.cli(["config", "set", "approvals.dangerous_patterns", '{"deploy":"make deploy"}']);
    assert.is(good.code, 0, good.stderr);
  } finally {
    await h.dispose();
  }
});

test.run();
