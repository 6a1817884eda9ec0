import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, driveChat } from "./helpers.js";

const ESC = "\x1b";
/** What a hostile or confused model might send: clipboard write, title, clear screen, cursor moves, 8-bit CSI, an overwrite. */
const HOSTILE =
  `before ${ESC}]52;c;cm0gLXJmIH4=\x07` + `${ESC}]0;owned title${ESC}\\` + `${ESC}[2J${ESC}[H${ESC}[5;5H${ESC}[1A` + `\u009b2J${ESC}c` + `middle\rafter`;

/** No byte that could drive a terminal: ESC, BEL, other C0 except \n and \t, DEL, C1, or a bare \r. */
function assertInert(out: string, what: string): void {
  const bad = /[\x00-\x08\x0b-\x1f\x7f\u0080-\u009f]/.exec(out);
  assert.not.ok(bad, `${what} printed a control character ${JSON.stringify(bad?.[0])} in ${JSON.stringify(out)}`);
}

test("agent chat -q prints a reply full of escape sequences without any of them, keeping its text", async () => {
  const h = await chatHome({ script: [{ text: HOSTILE, chunkChars: 4 }] });
  try {
    const r = await h.chat(["-q", "hi"]);
    assert.is(r.code, 0, r.stderr);
    assertInert(r.stdout, "chat -q");
    assert.is(r.stdout, "before middle\nafter\n");
  } finally {
    await h.dispose();
  }
});

test("agent chat -q --json keeps the reply exact, escaped as JSON", async () => {
  const h = await chatHome({ script: [{ text: HOSTILE }] });
  try {
    const r = await h.chat(["-q", "hi", "--json"]);
    assert.is(r.code, 0, r.stderr);
    assertInert(r.stdout.replace(/\n/g, ""), "chat -q --json");
    assert.is(JSON.parse(r.stdout).answer, HOSTILE);
  } finally {
    await h.dispose();
  }
});

test("line mode streams deltas with sequences split across them, and tool rows, without control sequences", async () => {
  const h = await chatHome({
    script: [{ toolCalls: [{ name: `${ESC}]52;c;eA==\x07no_such_tool${ESC}[2J`, arguments: {} }] }, { text: HOSTILE, chunkChars: 3 }],
  });
  try {
    const chat = driveChat(h);
    chat.send("hi");
    await chat.expect(/after/);
    await chat.expect(/── s_/);
    chat.send("/exit");
    assert.is(await chat.end(), 0, chat.err);
    assertInert(chat.out, "line mode");
    assert.match(chat.out, /before middle\nafter/);
    assert.match(chat.out, /⚙ no_such_tool\n/);
  } finally {
    await h.dispose();
  }
});

test("session titles from a prompt with escape sequences list without them", async () => {
  const h = await chatHome({ script: [{ text: "ok" }], loop: true });
  try {
    const sent = await h.chat(["-q", `${ESC}]0;x\x07title ${ESC}[31mred`]);
    assert.is(sent.code, 0, sent.stderr);
    const list = await h.chat(["--list"]);
    assert.is(list.code, 0, list.stderr);
    assertInert(list.stdout, "chat --list");
    assert.match(list.stdout, /title red/);
  } finally {
    await h.dispose();
  }
});

test.run();
