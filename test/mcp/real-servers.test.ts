// The other real servers from npm: server-filesystem, and server-everything's long-running
// operation (progress notifications on the way).
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { EVERYTHING, FILESYSTEM, fake, mcpConfig } from "./helpers.js";

test("server-filesystem: the model lists a directory and reads a file through it; a path outside its roots is a tool error", async () => {
  const h = await chatHome();
  try {
    const root = join(h.home, "shared");
    mkdirSync(root);
    writeFileSync(join(root, "notes.md"), "# Notes\nthe answer is 42\n");
    writeFileSync(
      join(h.home, "config.yaml"),
      `${readFileSync(join(h.home, "config.yaml"), "utf8")}${mcpConfig({ filesystem: { command: process.execPath, args: [FILESYSTEM, root] } })}`,
    );
    h.fake.setScript([
      {
        toolCalls: [
          { name: "mcp_filesystem_list_directory", arguments: { path: root } },
          { name: "mcp_filesystem_read_text_file", arguments: { path: join(root, "notes.md") } },
          { name: "mcp_filesystem_read_text_file", arguments: { path: "/etc/hostname" } },
        ],
      },
      { text: "Read it." },
    ]);
    const r = await h.chat(["-q", "read my notes"]);
    assert.is(r.code, 0, r.stderr);
    const seen = toolMessages(h.fake, 1).map((m) => m.content);
    assert.match(seen[0]!, /\[FILE\] notes\.md/);
    assert.match(seen[1]!, /the answer is 42/);
    assert.match(seen[2]!, /"error":.*(denied|outside|not allowed)/i);
  } finally {
    await h.dispose();
  }
});

test("server-everything's long-running operation (with progress) completes within its timeout", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"], extra: { timeout: 10 } } }));
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_trigger-long-running-operation", arguments: { duration: 1, steps: 4 } }] }, { text: "Done." }]);
    const r = await h.chat(["-q", "run it"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /Long running operation completed\. Duration: 1 seconds, Steps: 4/);
  } finally {
    await h.dispose();
  }
});

test("notifications/tools/list_changed refreshes a server's tools for the next turn", async () => {
  const h = await chatHome({}, mcpConfig({ shifty: fake("grow") }));
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_shifty_grow", arguments: {} }] }, { text: "Grown." }]);
    const r = await h.chat(["-q", "grow"]);
    assert.is(r.code, 0, r.stderr);
    const names = (i: number): string[] => h.fake.requests[i]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(names(0).includes("mcp_shifty_grow"));
    h.fake.setScript([{ text: "Now." }]);
    const next = await h.chat(["-q", "again"]);
    assert.is(next.code, 0, next.stderr);
    assert.ok(names(2).includes("mcp_shifty_grown"), names(2).join(", "));
    assert.not.ok(names(2).includes("mcp_shifty_grow"));
  } finally {
    await h.dispose();
  }
});

test("daemon stop stops the MCP servers it started (their whole process group)", async () => {
  const h = await chatHome({}, mcpConfig({ fakeone: fake("") }));
  try {
    const tools = await h.cli(["mcp", "tools", "fakeone"]);
    assert.is(tools.code, 0, tools.stderr);
    const listed = JSON.parse((await h.cli(["mcp", "list", "--json"])).stdout).servers[0];
    assert.is(listed.state, "ready");
    const alive = (pid: number) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    assert.ok(alive(listed.pid));
    const stopped = await h.cli(["daemon", "stop"]);
    assert.is(stopped.code, 0, stopped.stderr);
    await waitFor("the server to be gone", () => !alive(listed.pid));
  } finally {
    await h.dispose();
  }
});

test.run();
