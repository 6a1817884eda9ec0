import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome } from "./helpers.js";

// Issue 23, part 4b: a prompt over the actor queue's 64 KiB (a pasted log) works, up to 1 MiB.

const lastUser = (body: any): string => {
  const users = (body?.messages ?? []).filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : JSON.stringify(c);
};

const log = (bytes: number) => {
  const line = "2026-11-24T21:00:00Z INFO request served in 12 ms path=/api/v1/items status=200\n";
  return `Why is this slow?\n${line.repeat(Math.ceil(bytes / line.length))}`.slice(0, bytes);
};

const h = await chatHome({ respond: () => ({ text: "looked at it" }) });
test.after(() => h.dispose());

test("a 100 KiB prompt on the command line runs a turn; the model gets all of it, the session holds it", async () => {
  const prompt = log(100 * 1024);
  const r = await h.chat(["-q", prompt, "--json"]);
  assert.is(r.code, 0, r.stderr.slice(0, 2000));
  const { session_id: sessionId } = JSON.parse(r.stdout);
  assert.is(lastUser(h.fake.requests.at(-1)!.body), prompt);
  const client = await connectDaemon({ home: h.home });
  try {
    const { messages } = await client.call("chat.sessions.get", { sessionId });
    const user = messages.find((m: { role: string }) => m.role === "user");
    assert.is(user?.content, prompt);
    // The spilled prompt's file is gone once the turn recorded it.
    const dir = join(h.home, "data", "agent", "prompts");
    assert.equal(existsSync(dir) ? readdirSync(dir) : [], []);
  } finally {
    client.close();
  }
});

test("a prompt just under 1 MiB works; one over it is refused with the limit named, and no session is created", async () => {
  const client = await connectDaemon({ home: h.home });
  try {
    const before = (await client.call("chat.sessions.list", {})).sessions.length;
    const big = log(1024 * 1024 - 100);
    const ok = await client.call("chat.send", { prompt: big });
    assert.is(lastUser(h.fake.requests.at(-1)!.body), big);
    assert.is(ok.answer, "looked at it");
    const requests = h.fake.requests.length;
    let error: any = null;
    await client.call("chat.send", { prompt: log(1024 * 1024 + 1) }).catch((e: unknown) => (error = e));
    assert.ok(error, "an over-limit prompt was accepted");
    assert.is(error.code, "chat.prompt_too_large");
    assert.match(error.message, /at most 1048576 bytes \(1 MiB\)/);
    assert.is((await client.call("chat.sessions.list", {})).sessions.length, before + 1);
    assert.is(h.fake.requests.length, requests);
  } finally {
    client.close();
  }
});

test.run();
