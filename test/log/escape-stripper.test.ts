// The one escape stripper (shared/terminal-text.ts) against hostile sequences, and the terminal
// tool's output formatter (a pool task) going through it: nothing of a DCS/SOS/PM/APC body, an
// OSC, a CSI or a lone C1 control survives.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry } from "../../daemon/agent/tools/index.js";
import { formatOutput } from "../../daemon/pool/tasks/output.js";
import { terminalText } from "../../shared/terminal-text.js";
import { ctxFor, out, tempTree } from "../tools/helpers.js";

const ESC = "\x1b";
const ST = `${ESC}\\`;

/** Hostile inputs and what must be left of each. */
const HOSTILE: Array<[string, string, string]> = [
  ["DCS DECRQSS reply body", `a${ESC}P1$r0;1m${ST}b`, "ab"],
  ["DCS sixel image body", `a${ESC}Pq#0;2;0;0;0#0!20~-${ST}b`, "ab"],
  ["DCS XTGETTCAP body", `a${ESC}P+q544e${ST}b`, "ab"],
  ["tmux passthrough carrying an OSC 52 write", `a${ESC}Ptmux;${ESC}${ESC}]52;c;cHduZWQ=\x07${ST}b`, "ab"],
  ["8-bit DCS ended by 8-bit ST", "a\u0090q#0;2;0;0;0\u009cb", "ab"],
  ["SOS, PM and APC bodies", `a${ESC}Xsos body${ST}b${ESC}^pm body${ST}c${ESC}_Gf=100;AAAA${ST}d`, "abcd"],
  ["8-bit SOS, PM, APC", "a\u0098x\u009cb\u009ey\u009cc\u009fz\u009cd", "abcd"],
  ["OSC 52 ended by BEL", `a${ESC}]52;c;cHduZWQ=\x07b`, "ab"],
  ["OSC 8 hyperlink ended by ST", `${ESC}]8;;https://evil.example${ST}click${ESC}]8;;${ST}`, "click"],
  ["8-bit OSC ended by BEL", "a\u009d2;title\u0007b", "ab"],
  ["CSI with private parameters and intermediates", `a${ESC}[?1049h${ESC}[>4;2m${ESC}[1 qb`, "ab"],
  ["8-bit CSI", "a\u009b6nb\u009b?25lc", "abc"],
  ["lone C1 controls (IND, NEL, HTS, RI, SS2, SS3, CSI-less ST)", "a\u0084\u0085\u0088\u008d\u008e\u008f\u009cb", "ab"],
  ["ESC sequences: RIS, DECSC/DECRC, charset", `a${ESC}c${ESC}7${ESC}8${ESC}(0${ESC}(Bb`, "ab"],
  ["a DCS that never ends stops at the newline", `a${ESC}P1$r0m\nvisible`, "a\nvisible"],
  ["a DCS aborted by a new escape leaves no body bytes that drive the terminal", `${ESC}Pbody${ESC}[2Jtext`, "text"],
];

for (const [name, input, expected] of HOSTILE) {
  test(`terminalText strips ${name}`, () => {
    const out = terminalText(input);
    assert.is(out, expected);
    assert.not.match(out, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/);
  });
}

const bytes = (s: string) => new Uint8Array(Buffer.from(s, "utf8"));

test("the terminal tool's output formatter removes DCS string bodies, not just their introducer", () => {
  const out = formatOutput({ kind: "format_output", head: bytes(`ok${ESC}P1$r0;1m${ST} done\r\n`), tail: new Uint8Array(0), omittedBytes: 0 });
  assert.is(out.output, "ok done\n");
});

test("the terminal tool's output formatter strips every hostile sequence in head and tail alike", () => {
  for (const [name, input, expected] of HOSTILE) {
    const out = formatOutput({ kind: "format_output", head: bytes(input), tail: bytes(input), omittedBytes: 10 });
    assert.is(out.output, `${expected}\n\n[… output truncated: 10 bytes omitted from the middle …]\n\n${expected}`, name);
  }
});

test("the formatter keeps text, tabs and newlines, and turns carriage returns into newlines", () => {
  const out = formatOutput({ kind: "format_output", head: bytes("a\tb\r\nc\rd é 日本\n"), tail: new Uint8Array(0), omittedBytes: 0 });
  assert.is(out.output, "a\tb\nc\nd é 日本\n");
});

test("the terminal tool, run for real, hands the model a command's output without DCS, APC or OSC bodies", async () => {
  const registry = createToolRegistry();
  const t = tempTree({});
  try {
    // printf turns \033 into ESC and \\ into one backslash (ESC \ is the string terminator).
    const command = String.raw`printf 'ok\033P1$r0;1m\033\\ \033_Gf=100;AAAA\033\\mid\033]52;c;cHduZWQ=\007 done\r\n'`;
    const r = await registry.execute("terminal", { command }, ctxFor(t.dir));
    assert.is(r.ok, true, JSON.stringify(r.output));
    assert.is(out(r).output, "ok mid done\n");
  } finally {
    await registry.close();
    t.cleanup();
  }
});

test.run();
