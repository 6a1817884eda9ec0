import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, sharedChatHome, driveChat, PNG_1X1, toolMessages } from "./helpers.js";

type Part = { type: string; text?: string; image_url?: { url: string } };
const imagesIn = (body: any): Part[] =>
  body.messages.flatMap((m: { content: unknown }) => (Array.isArray(m.content) ? (m.content as Part[]).filter((p) => p.type === "image_url") : []));

/**
 * The tests that need no config or daemon environment of their own share one home (one daemon):
 * each starts with the fake model's recorded requests cleared and its own script, and each chat
 * is a session of its own; files are named per test.
 */
const home = sharedChatHome();
const sharedHome = home.get;
test.after(home.dispose);

test("--image attaches an image_url part to the prompt", async () => {
  const h = await sharedHome([{ text: "a single pixel" }]);
  const png = join(h.home, "pixel.png");
  writeFileSync(png, PNG_1X1);
  const r = await h.chat(["-q", "what is this?", "--image", png]);
  assert.is(r.code, 0, r.stderr);
  const user = h.fake.requests[0]!.body.messages.at(-1);
  assert.is(user.role, "user");
  assert.equal(user.content[0], { type: "text", text: "what is this?" });
  assert.is(user.content[1].type, "image_url");
  assert.is(user.content[1].image_url.url, `data:image/png;base64,${PNG_1X1.toString("base64")}`);
});

test("a multimodal tool result (read_file of a PNG) reaches the model as content parts", async () => {
  const h = await sharedHome();
  const png = join(h.home, "shot.png");
  writeFileSync(png, PNG_1X1);
  h.fake.setScript([{ toolCalls: [{ name: "read_file", arguments: { path: png } }] }, { text: "I see it" }]);
  const r = await h.chat(["-q", "look at shot.png"]);
  assert.is(r.code, 0, r.stderr);
  const [tool] = toolMessages(h.fake, 1);
  assert.type(tool!.content, "string");
  const images = imagesIn(h.fake.requests[1]!.body);
  assert.is(images.length, 1);
  assert.is(images[0]!.image_url!.url, `data:image/png;base64,${PNG_1X1.toString("base64")}`);
});

test("a provider configured without image support gets the tool result's text_summary instead", async () => {
  const h = await chatHome();
  try {
    writeFileSync(
      join(h.home, "config.yaml"),
      `_config_version: 13\nmodel:\n  provider: blind\n  retry_base_ms: 20\nproviders:\n  blind:\n    base_url: ${h.fake.baseUrl}\n    model: text-only\n    supports_images: false\n`,
    );
    const png = join(h.home, "shot.png");
    writeFileSync(png, PNG_1X1);
    h.fake.setScript([{ toolCalls: [{ name: "read_file", arguments: { path: png } }] }, { text: "no eyes" }]);
    const r = await h.chat(["-q", "look at shot.png"]);
    assert.is(r.code, 0, r.stderr);
    assert.not.match(r.stderr, /unknown key/);
    assert.is(imagesIn(h.fake.requests[1]!.body).length, 0);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /cannot view images/);
    // The daemon logs config warnings; supports_images is a known provider field.
    const log = readFileSync(join(h.home, "logs", "daemon.log"), "utf8");
    assert.match(log, /daemon ready/);
    assert.not.match(log, /unknown key providers\.blind\.supports_images/);
  } finally {
    await h.dispose();
  }
});

test("only the 3 most recent screenshots stay in the context", async () => {
  const h = await sharedHome();
  const shots = [1, 2, 3, 4, 5].map((i) => {
    const p = join(h.home, `shot${i}.png`);
    writeFileSync(p, PNG_1X1);
    return p;
  });
  h.fake.setScript([...shots.map((p) => ({ toolCalls: [{ name: "read_file", arguments: { path: p } }] })), { text: "seen them all" }]);
  const r = await h.chat(["-q", "look at five shots"]);
  assert.is(r.code, 0, r.stderr);
  const last = h.fake.requests[5]!.body;
  assert.is(imagesIn(last).length, 3);
  const labels = last.messages.flatMap((m: { content: unknown }) =>
    Array.isArray(m.content) ? (m.content as Part[]).filter((p) => p.type === "text").map((p) => p.text) : [],
  );
  const ids = toolMessages(h.fake, 5).map((t) => t.tool_call_id);
  // The images kept are those of the last three calls.
  for (const id of ids.slice(2))
    assert.ok(
      labels.some((l: string) => l.includes(id)),
      `image of ${id} kept`,
    );
  for (const id of ids.slice(0, 2))
    assert.not.ok(
      labels.some((l: string) => l.includes(id)),
      `image of ${id} dropped`,
    );
  assert.match(toolMessages(h.fake, 5)[0]!.content, /older image\(s\) omitted/);
});

test("AGENT_FILE_MUTATION_VERIFIER=0 turns the failed-edit footer off", async () => {
  const h = await chatHome();
  try {
    const file = join(h.home, "b.txt");
    writeFileSync(file, "one\n");
    h.fake.setScript([{ toolCalls: [{ name: "patch", arguments: { path: file, search: "two", replace: "three" } }] }, { text: "All done." }]);
    // The daemon starts with the chat's environment.
    const r = await h.chat(["-q", "edit b"], { env: { AGENT_FILE_MUTATION_VERIFIER: "0" } });
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "All done.");
  } finally {
    await h.dispose();
  }
});

test("a kanban worker (AGENT_KANBAN_TASK set) runs the loop in its own process and writes the transcript through the daemon", async () => {
  const h = await chatHome();
  // A worker is always spawned by a running daemon (it never starts one itself).
  assert.is((await h.cli(["daemon", "start"])).code, 0);
  try {
    const file = join(h.home, "task.txt");
    writeFileSync(file, "todo: ship it\n");
    h.fake.setScript([{ toolCalls: [{ name: "read_file", arguments: { path: file } }] }, { text: "Shipped." }]);
    const r = await h.chat(["-q", "do the task", "--json"], { env: { AGENT_KANBAN_TASK: "t_42" } });
    assert.is(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout);
    assert.is(result.answer, "Shipped.");
    // The worker's own loop: its system prompt names the task.
    assert.match(h.fake.requests[0]!.body.messages[0].content, /kanban task \(t_42\)/);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /todo: ship it/);
    const client = await connectDaemon({ home: h.home });
    try {
      const { messages, session } = await client.call("chat.sessions.get", { sessionId: result.session_id });
      assert.equal(
        messages.map((m) => m.role),
        ["user", "assistant", "tool", "assistant"],
      );
      assert.is(messages[3]!.content, "Shipped.");
      assert.is(session.messageCount, 4);
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
  }
});

test("an interactive chat driven through stdin streams the answer as it arrives", async () => {
  const answer = "streaming works one piece at a time";
  const h = await sharedHome([{ text: answer, chunkChars: 6, chunkDelayMs: 120 }]);
  const chat = driveChat(h);
  try {
    chat.send("stream please");
    await chat.expect(/one piece at a time/);
    assert.is(await chat.end(), 0, chat.err);
  } finally {
    chat.child.kill();
  }
  // The first piece was on screen well before the last one was sent.
  const first = chat.chunks.find((c) => c.text.includes("stream"))!;
  const last = chat.chunks.find((c) => c.text.includes("time"))!;
  assert.ok(chat.chunks.filter((c) => c.at >= first.at && c.at <= last.at).length >= 3, "several writes");
  assert.ok(last.at - first.at >= 400, `pieces arrived over time (${last.at - first.at} ms)`);
});

test.run();
