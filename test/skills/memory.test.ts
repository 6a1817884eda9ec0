import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, toolMessages } from "../agent/helpers.js";

const system = (body: any): string => body.messages[0].content;
const toolNames = (body: any): string[] => (body.tools ?? []).map((t: any) => t.function.name);

test("memory persists across sessions of one profile and is invisible to another profile", async () => {
  const h = await chatHome({
    script: [
      { toolCalls: [{ name: "memory", arguments: { action: "add", target: "user", content: "The user drinks green tea." } }] },
      { text: "noted" },
      { text: "second" },
      { text: "writer" },
    ],
  });
  try {
    mkdirSync(join(h.home, "profiles", "writer"), { recursive: true });
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      const first = await client.call("chat.send", { prompt: "I like green tea" });
      assert.is(first.answer, "noted");
      assert.match(toolMessages(h.fake, 1)[0]!.content, /The user drinks green tea\./);
      assert.match(readFileSync(join(h.home, "memories", "USER.md"), "utf8"), /^The user drinks green tea\.$/m);
      const second = await client.call("chat.send", { prompt: "what do I drink?" });
      assert.is(second.answer, "second");
      assert.is.not(second.sessionId, first.sessionId);
      assert.match(system(h.fake.requests[2]!.body), /## Memory[\s\S]*About the user[\s\S]*- The user drinks green tea\./);
      const writer = await client.call("chat.send", { prompt: "what do I drink?", profile: "writer" });
      assert.is(writer.answer, "writer");
      assert.not.match(system(h.fake.requests[3]!.body), /green tea|## Memory/);
      const status = await client.call("memory.status", { profile: "writer" });
      assert.equal(
        status.stores.map((s) => s.entries.length),
        [0, 0],
      );
      assert.ok(!existsSync(join(h.home, "profiles", "writer", "memories", "USER.md")));
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
  }
});

test("a session's system prompt keeps the memory it started with; an edit shows in the next session", async () => {
  const h = await chatHome({
    script: [
      { text: "one" },
      { toolCalls: [{ name: "memory", arguments: { action: "add", content: "Builds run with make." } }] },
      { text: "saved" },
      { text: "three" },
      { text: "new session" },
    ],
  });
  try {
    mkdirSync(join(h.home, "memories"), { recursive: true });
    writeFileSync(join(h.home, "memories", "MEMORY.md"), "Tests use uvu.\n");
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      const a = await client.call("chat.send", { prompt: "hello" });
      await client.call("chat.send", { prompt: "remember the build", sessionId: a.sessionId });
      await client.call("chat.send", { prompt: "and now?", sessionId: a.sessionId });
      const prompts = h.fake.requests.slice(0, 4).map((r) => system(r.body));
      assert.ok(
        prompts.every((p) => p === prompts[0]),
        "the same system prompt on every turn of the session",
      );
      assert.match(prompts[0]!, /- Tests use uvu\./);
      assert.not.match(prompts[0]!, /Builds run with make/);
      await client.call("chat.send", { prompt: "new" });
      assert.match(system(h.fake.requests[4]!.body), /- Tests use uvu\.\n- Builds run with make\./);
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
  }
});

test("an entry past a store's size limit is refused with a clear error and nothing is saved", async () => {
  const long = "x".repeat(90);
  const h = await chatHome(
    {
      script: [
        { toolCalls: [{ name: "memory", arguments: { action: "add", content: long } }] },
        { toolCalls: [{ name: "memory", arguments: { action: "add", content: `second ${long}` } }] },
        { text: "full" },
      ],
    },
    "memory:\n  memory_char_limit: 120\n",
  );
  try {
    const r = await h.chat(["-q", "remember two things"]);
    assert.is(r.code, 0, r.stderr);
    const [ok] = toolMessages(h.fake, 1);
    assert.match(JSON.parse(ok!.content).usage, /^90\/120 chars$/);
    const [refused] = toolMessages(h.fake, 2).slice(-1);
    const out = JSON.parse(refused!.content);
    assert.is(out.code, "memory_full");
    assert.match(out.error, /the memory store would hold 190 characters, over its limit of 120 \(now 90\); nothing was saved/);
    assert.is(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8"), `${long}\n`);
    const status = JSON.parse((await h.cli(["memory", "status", "--json"])).stdout);
    assert.equal(status.stores[0], { name: "memory", file: join(h.home, "memories", "MEMORY.md"), entries: [long], chars: 90, limit: 120 });
  } finally {
    await h.dispose();
  }
});

test("the memory tool replaces and removes entries by a unique part of their text", async () => {
  const h = await chatHome({
    script: [
      { toolCalls: [{ name: "memory", arguments: { action: "replace", old_text: "tabs", new_text: "Indent with two spaces." } }] },
      { toolCalls: [{ name: "memory", arguments: { action: "remove", old_text: "Deploy" } }] },
      { toolCalls: [{ name: "memory", arguments: { action: "remove", old_text: "e" } }] },
      { text: "tidied" },
    ],
  });
  try {
    mkdirSync(join(h.home, "memories"), { recursive: true });
    writeFileSync(join(h.home, "memories", "MEMORY.md"), "Indent with tabs.\n§\nDeploy on Fridays.\n§\nUse pnpm.\n");
    const r = await h.chat(["-q", "tidy your notes"]);
    assert.is(r.code, 0, r.stderr);
    const results = toolMessages(h.fake, 3).map((m) => JSON.parse(m.content));
    assert.equal(results[0].entries, ["Indent with two spaces.", "Deploy on Fridays.", "Use pnpm."]);
    assert.equal(results[1].entries, ["Indent with two spaces.", "Use pnpm."]);
    assert.is(results[2].code, "ambiguous");
    assert.is(readFileSync(join(h.home, "memories", "MEMORY.md"), "utf8"), "Indent with two spaces.\n§\nUse pnpm.\n");
  } finally {
    await h.dispose();
  }
});

test("agent memory off: the memory tool is not offered and nothing is injected; setup turns it back on", async () => {
  const h = await chatHome({ script: [{ text: "off" }, { text: "on" }] });
  try {
    mkdirSync(join(h.home, "memories"), { recursive: true });
    writeFileSync(join(h.home, "memories", "USER.md"), "The user is called Ada.\n");
    const off = await h.cli(["memory", "off"]);
    assert.is(off.code, 0, off.stderr);
    assert.match(off.stdout, /memory: off/);
    assert.match(readFileSync(join(h.home, "config.yaml"), "utf8"), /memory:\n {2}enabled: false/);
    assert.match((await h.cli(["memory", "status"])).stdout, /memory: off, provider builtin[\s\S]*user .*1 entry/);
    assert.is((await h.chat(["-q", "who am I?"])).code, 0);
    const body = h.fake.requests[0]!.body;
    assert.not.ok(toolNames(body).includes("memory"));
    assert.not.match(system(body), /Ada|## Memory/);
    const setup = await h.cli(["memory", "setup", "--json"]);
    assert.is(setup.code, 0, setup.stderr);
    assert.equal([JSON.parse(setup.stdout).enabled, JSON.parse(setup.stdout).provider], [true, "builtin"]);
    assert.match(readFileSync(join(h.home, "config.yaml"), "utf8"), /provider: builtin/);
    assert.is((await h.chat(["-q", "who am I now?"])).code, 0);
    const again = h.fake.requests[1]!.body;
    assert.ok(toolNames(again).includes("memory"));
    assert.match(system(again), /- The user is called Ada\./);
  } finally {
    await h.dispose();
  }
});

test("agent memory off --profile writer turns memory off for writer only, in writer's config.yaml", async () => {
  const h = await chatHome({ script: [{ text: "default" }, { text: "writer" }] });
  try {
    mkdirSync(join(h.home, "memories"), { recursive: true });
    writeFileSync(join(h.home, "memories", "USER.md"), "The user is called Ada.\n");
    const writerDir = join(h.home, "profiles", "writer");
    mkdirSync(join(writerDir, "memories"), { recursive: true });
    writeFileSync(join(writerDir, "memories", "USER.md"), "The user writes poems.\n");
    writeFileSync(join(writerDir, "config.yaml"), "# the writer's own settings\nmemory:\n  user_char_limit: 500 # roomier\n");
    const homeConfig = readFileSync(join(h.home, "config.yaml"), "utf8");
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const off = await h.cli(["memory", "off", "--profile", "writer", "--json"]);
    assert.is(off.code, 0, off.stderr);
    assert.equal([JSON.parse(off.stdout).profile, JSON.parse(off.stdout).enabled], ["writer", false]);
    const written = readFileSync(join(writerDir, "config.yaml"), "utf8");
    assert.match(written, /^# the writer's own settings$/m);
    assert.match(written, /user_char_limit: 500 # roomier/);
    assert.match(written, /enabled: false/);
    assert.is(readFileSync(join(h.home, "config.yaml"), "utf8"), homeConfig);
    const client = await connectDaemon({ home: h.home });
    try {
      await client.call("chat.send", { prompt: "who am I?" });
      const home = h.fake.requests[0]!.body;
      assert.ok(toolNames(home).includes("memory"));
      assert.match(system(home), /- The user is called Ada\./);
      await client.call("chat.send", { prompt: "who am I?", profile: "writer" });
      const writer = h.fake.requests[1]!.body;
      assert.not.ok(toolNames(writer).includes("memory"));
      assert.not.match(system(writer), /poems|## Memory/);
      assert.is((await client.call("memory.status", {})).enabled, true);
      const status = await client.call("memory.status", { profile: "writer" });
      assert.equal([status.enabled, status.stores[1]!.limit], [false, 500]);
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
  }
});

test("agent memory names an unknown profile with a clear error and changes nothing", async () => {
  const h = await chatHome();
  try {
    const r = await h.cli(["memory", "status", "--profile", "ghost"]);
    assert.is(r.code, 4);
    assert.match(r.stderr, /no profile named "ghost"/);
    // --profile is checked once for every command when the connection opens: a bad name exits 1.
    const bad = await h.cli(["memory", "setup", "--profile", "../etc"]);
    assert.is(bad.code, 1);
    assert.match(bad.stderr, /invalid profile name/);
    assert.not.ok(existsSync(join(h.home, "profiles")));
    assert.not.match(readFileSync(join(h.home, "config.yaml"), "utf8"), /memory/);
  } finally {
    await h.dispose();
  }
});

test.run();
