import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, sharedChatHome, driveChat } from "./helpers.js";

const texts = (body: any): string[] =>
  body.messages.map((m: { role: string; content: unknown }) => `${m.role}:${typeof m.content === "string" ? m.content : JSON.stringify(m.content)}`);

/**
 * The first three tests need no config of their own: they share one home (one daemon), each
 * starting with the fake model's recorded requests cleared and its own script, in a session of
 * its own.
 */
const home = sharedChatHome();
const sharedHome = home.get;
test.after(home.dispose);

test("/btw tells the model the session's working directory, not the daemon's", async () => {
  const h = await sharedHome([{ text: "noted" }, { text: "side answer" }]);
  assert.is((await h.cli(["daemon", "start"])).code, 0);
  const client = await connectDaemon({ home: h.home });
  try {
    const cwd = join(h.home, "project");
    mkdirSync(cwd);
    const { sessionId } = await client.call("chat.send", { prompt: "remember this", cwd });
    const r = await client.call("chat.btw", { sessionId, question: "where are we?" });
    assert.is(r.answer, "side answer");
    const system = h.fake.requests[1]!.body.messages[0];
    assert.is(system.role, "system");
    assert.ok(system.content.includes(`The working directory is ${cwd}.`), system.content);
    // The daemon runs in the test's directory; the side question must not say that one.
    assert.not.ok(system.content.includes(`The working directory is ${process.cwd()}.`));
  } finally {
    client.close();
  }
});

test("/btw answers from the current context and is not added to the history", async () => {
  const h = await sharedHome([{ text: "noted the kiwi" }, { text: "it was kiwi" }, { text: "next answer" }]);
  const listSessions = async () => {
    const client = await connectDaemon({ home: h.home });
    try {
      return (await client.call("chat.sessions.list", {})).sessions.map((s) => s.id);
    } finally {
      client.close();
    }
  };
  // The home is shared: the chat's session is the one that was not there before.
  const earlier = new Set(await listSessions());
  const r = await h.chat([], { input: "remember the word kiwi\n/btw which word was it?\nand now?\n/exit\n" });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /\(btw\) it was kiwi/);
  const btw = texts(h.fake.requests[1]!.body);
  assert.ok(btw.includes("user:remember the word kiwi"), "the side question sees the conversation");
  assert.ok(btw.includes("assistant:noted the kiwi"));
  assert.match(btw[btw.length - 1]!, /which word was it\?/);
  // The next turn's context and the stored transcript hold no trace of it.
  const next = texts(h.fake.requests[2]!.body);
  assert.not.ok(next.some((t) => t.includes("which word was it") || t.includes("it was kiwi")));
  const made = (await listSessions()).filter((id) => !earlier.has(id));
  assert.is(made.length, 1, "one session made by the chat");
  const client = await connectDaemon({ home: h.home });
  try {
    const { messages } = await client.call("chat.sessions.get", { sessionId: made[0]! });
    assert.equal(
      messages.map((m) => m.content),
      ["remember the word kiwi", "noted the kiwi", "and now?", "next answer"],
    );
  } finally {
    client.close();
  }
});

test("/snapshot writes the session as Markdown to $AGENT_HOME/snapshots/ and prints the path", async () => {
  const h = await sharedHome([{ text: "the capital is Paris" }]);
  const r = await h.chat([], { input: "what is the capital of France?\n/snapshot france notes\n/exit\n" });
  assert.is(r.code, 0, r.stderr);
  const path = /snapshot written: (\S+)/.exec(r.stdout)?.[1];
  assert.is(path, join(h.home, "snapshots", "france-notes.md"));
  const md = readFileSync(path!, "utf8");
  assert.match(md, /what is the capital of France\?/);
  assert.match(md, /the capital is Paris/);
});

test("/fast switches the next turns to model.fast and back", async () => {
  const h = await chatHome({ script: [{ text: "a" }, { text: "b" }, { text: "c" }] }, "  fast: fake-fast-model\n");
  try {
    const r = await h.chat([], { input: "one\n/fast\ntwo\n/fast\nthree\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /fast mode on: next turns use fake-fast-model/);
    assert.equal(
      h.fake.requests.map((q) => q.body.model),
      ["fake-model", "fake-fast-model", "fake-model"],
    );
  } finally {
    await h.dispose();
  }
});

test("/reload picks up a changed config.yaml and .env", async () => {
  const h = await chatHome({ script: [{ text: "first" }, { text: "second" }] });
  try {
    const config = (model: string) =>
      `_config_version: 13\nmodel:\n  provider: fake\n  retry_base_ms: 20\nproviders:\n  fake:\n    base_url: ${h.fake.baseUrl}\n    model: ${model}\n    api_key_env: FAKE_KEY\n`;
    writeFileSync(join(h.home, "config.yaml"), config("model-one"));
    writeFileSync(join(h.home, ".env"), "FAKE_KEY=key-one\n");
    const chat = driveChat(h);
    chat.send("hello");
    await chat.expect(/first/);
    writeFileSync(join(h.home, "config.yaml"), config("model-two"));
    writeFileSync(join(h.home, ".env"), "FAKE_KEY=key-two\n");
    const mark = chat.out.length;
    chat.send("/reload");
    await chat.expect(/reloaded config and \.env: fake model-two/, mark);
    chat.send("again");
    await chat.expect(/second/, mark);
    assert.is(await chat.end(), 0, chat.err);
    const [a, b] = h.fake.requests;
    assert.is(a!.body.model, "model-one");
    assert.is(a!.headers.authorization, "Bearer key-one");
    assert.is(b!.body.model, "model-two");
    assert.is(b!.headers.authorization, "Bearer key-two");
  } finally {
    await h.dispose();
  }
});

test("/restart restarts the daemon and the chat reattaches to its session and keeps working", async () => {
  const h = await chatHome({ script: [{ text: "before restart" }, { text: "after restart" }] });
  try {
    const chat = driveChat(h);
    chat.send("my name is Ada");
    await chat.expect(/before restart/);
    const pidBefore = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout).pid as number;
    const mark = chat.out.length;
    chat.send("/restart");
    const m = await chat.expect(/daemon restarted \(pid (\d+)\); still in session (s_\S+)/, mark);
    assert.is.not(Number(m[1]), pidBefore);
    assert.not.ok(existsSync(`/proc/${pidBefore}`) && readFileSync(`/proc/${pidBefore}/cmdline`, "utf8").includes("daemon/main.js"), "the old daemon is gone");
    chat.send("what is my name?");
    await chat.expect(/after restart/, mark);
    assert.is(await chat.end(), 0, chat.err);
    assert.is(JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout).pid, Number(m[1]));
    const sent = texts(h.fake.requests[1]!.body);
    assert.ok(sent.includes("user:my name is Ada"), "the same session continues");
  } finally {
    await h.dispose();
  }
});

test.run();
