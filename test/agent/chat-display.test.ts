// What a user sees in line-mode chat and can switch: display.statusbar and /statusbar, /debug,
// /image (and the 1,500 tokens an image counts in the context estimate), and chat --provider.
// One home and one fake model for all of them; each test reads what it needs from the output.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, PNG_1X1 } from "./helpers.js";

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;

const lastText = (body: any): string => {
  const m = body.messages.at(-1);
  if (typeof m.content === "string") return m.content;
  return Array.isArray(m.content) ? m.content.map((p: { text?: string }) => p.text ?? "").join("") : "";
};

test.before(async () => {
  h = await chatHome({
    respond: (req) => {
      const last = req.body.messages.at(-1);
      if (last.role === "tool") return { text: "listed" };
      if (lastText(req.body).includes("use a tool")) return { toolCalls: [{ name: "list_files", arguments: { path: "." } }] };
      return { text: `answer from ${req.body.model}` };
    },
  });
  // A second provider on the same fake, told apart by its model name.
  writeFileSync(
    join(h.home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: ${h.fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\nproviders:\n  other:\n    base_url: ${h.fake.baseUrl}\n    model: other-model\napprovals:\n  mode: off\n`,
  );
});

test.after(async () => {
  await h.dispose();
});

const STATUS = /^── \S+ · \S+ · turn \d+ tok · session \d+ tok · context ~(\d+) tok/m;

test("the status line shows by default; display.statusbar: false turns it off, and /statusbar toggles it for the chat", async () => {
  const on = await h.chat([], { input: "hello\n/exit\n" });
  assert.is(on.code, 0, on.stderr);
  assert.match(on.stdout, STATUS);

  assert.is((await h.cli(["config", "set", "display.statusbar", "false"])).code, 0);
  try {
    const off = await h.chat([], { input: "hello\n/statusbar\nagain\n/statusbar\nthird\n/exit\n" });
    assert.is(off.code, 0, off.stderr);
    const [beforeToggle, afterOn] = off.stdout.split("status line on");
    assert.ok(afterOn !== undefined, off.stdout);
    assert.not.match(beforeToggle!, STATUS, "off from the config");
    const [whileOn, afterOff] = afterOn!.split("status line off");
    assert.match(whileOn!, STATUS, "/statusbar turned it on");
    assert.ok(afterOff !== undefined, off.stdout);
    assert.not.match(afterOff!, STATUS, "and off again");
    // Only this chat: the setting is unchanged, the next chat starts without it.
    const next = await h.chat([], { input: "hello\n/exit\n" });
    assert.not.match(next.stdout, STATUS);
  } finally {
    assert.is((await h.cli(["config", "set", "display.statusbar", "true"])).code, 0);
  }
});

test("/debug shows tool arguments, results and timings, and turns off again", async () => {
  const r = await h.chat([], { input: "use a tool\n/debug\nuse a tool\n/debug\nuse a tool\n/exit\n" });
  assert.is(r.code, 0, r.stderr);
  const [plain, debug, after] = r.stdout.split(/debug on: tool arguments, results and timings are shown|debug off/);
  assert.ok(after !== undefined, r.stdout);
  assert.match(plain!, /⚙ list_files\n/);
  assert.not.match(plain!, /⚙ list_files \{/);
  assert.match(debug!, /⚙ list_files \{"path":"\."\}/);
  assert.match(debug!, /✓ list_files \(\d+ ms\) /);
  assert.match(after!, /⚙ list_files\n/);
  assert.not.match(after!, /✓ list_files/);
});

test("/image attaches an image to the next prompt only, and it counts 1,500 tokens in the context estimate", async () => {
  const png = join(h.home, "pixel.png");
  writeFileSync(png, PNG_1X1);
  const before = h.fake.requests.length;
  // Two fresh sessions with the same words: one with the image, one without.
  const withImage = await h.chat([], { input: `/image ${png}\nlook at this\nand now\n/exit\n` });
  assert.is(withImage.code, 0, withImage.stderr);
  assert.match(withImage.stdout, new RegExp(`image attached to the next prompt: ${png.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}`));
  const missing = await h.chat([], { input: "/image /no/such.png\n/exit\n" });
  assert.match(missing.stdout, /no file at \/no\/such\.png/);
  const without = await h.chat([], { input: "look at this\n/exit\n" });
  assert.is(without.code, 0, without.stderr);

  const [first, second, third] = h.fake.requests.slice(before).map((r) => r.body);
  const parts = first.messages.at(-1).content;
  assert.equal(parts[0], { type: "text", text: "look at this" });
  assert.is(parts[1].type, "image_url");
  assert.is(typeof second.messages.at(-1).content, "string", "the next prompt has no image");
  assert.is(third.messages.at(-1).content, "look at this");

  const ctx = (out: string) => [...out.matchAll(new RegExp(STATUS.source, "gm"))].map((m) => Number(m[1]));
  const [imageTurn] = ctx(withImage.stdout);
  const [plainTurn] = ctx(without.stdout);
  assert.is(imageTurn! - plainTurn!, 1500, `context ~${imageTurn} with the image, ~${plainTurn} without`);
});

test("chat --provider uses providers.<name>; an unknown one is a clear error", async () => {
  const before = h.fake.requests.length;
  const r = await h.chat(["--provider", "other", "-q", "hi"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(r.stdout.trim(), "answer from other-model");
  const plain = await h.chat(["-q", "hi"]);
  assert.is(plain.stdout.trim(), "answer from fake-model");
  assert.equal(
    h.fake.requests.slice(before).map((q) => q.body.model),
    ["other-model", "fake-model"],
  );
  // Line mode too: every turn of the chat goes to the chosen provider.
  const line = await h.chat(["--provider", "other"], { input: "one\ntwo\n/exit\n" });
  assert.is(line.code, 0, line.stderr);
  assert.equal(
    h.fake.requests.slice(before + 2).map((q) => q.body.model),
    ["other-model", "other-model"],
  );
  const bad = await h.chat(["--provider", "nosuch", "-q", "hi"]);
  assert.is(bad.code, 1, bad.stderr);
  assert.match(bad.stderr, /nosuch/);
  assert.not.match(bad.stderr, /\n\s+at /);
});

test.run();
