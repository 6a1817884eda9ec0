import { test } from "uvu";
import * as assert from "uvu/assert";
import { TerminalTextFilter, terminalJson, terminalText } from "../../shared/terminal-text.js";

const ESC = "\x1b";

test("plain text, newlines, tabs and non-ASCII text pass unchanged", () => {
  const text = "héllo\twörld\n  ⚙ naïve 日本語 🙂\n";
  assert.is(terminalText(text), text);
});

test("an OSC 52 clipboard write is removed whole, terminated by BEL or by ST", () => {
  assert.is(terminalText(`a${ESC}]52;c;aGVsbG8+d29ybGQ=\x07b`), "ab");
  assert.is(terminalText(`a${ESC}]52;c;aGVsbG8+d29ybGQ=${ESC}\\b`), "ab");
});

test("a title change, a hyperlink and 8-bit OSC are removed", () => {
  assert.is(terminalText(`${ESC}]0;pwned${ESC}\\title`), "title");
  assert.is(terminalText(`${ESC}]8;;https://evil.example${ESC}\\click${ESC}]8;;${ESC}\\`), "click");
  assert.is(terminalText("x\u009d0;pwned\u009cy"), "xy");
});

test("CSI sequences (clear screen, cursor moves, colours, 8-bit CSI) are removed", () => {
  assert.is(terminalText(`${ESC}[2J${ESC}[H${ESC}[10;20Hok${ESC}[1A${ESC}[?25l${ESC}[31mred${ESC}[0m`), "okred");
  assert.is(terminalText("a\u009b2Jb"), "ab");
});

test("DCS, APC, PM and SOS strings, two-character escapes and charset selections are removed", () => {
  assert.is(terminalText(`${ESC}P1$r0m${ESC}\\a${ESC}_apc${ESC}\\b${ESC}^pm${ESC}\\c${ESC}Xsos${ESC}\\d`), "abcd");
  assert.is(terminalText(`${ESC}c${ESC}7x${ESC}8${ESC}M${ESC}(0y${ESC}(B`), "xy");
});

test("a bare ESC, C1 and other C0 controls, DEL and backspace are removed", () => {
  assert.is(terminalText(`a${ESC}`), "a");
  assert.is(terminalText(`a${ESC}\nb`), "a\nb");
  assert.is(terminalText("a\x07\x08\x0b\x0c\x00\x7fb\u0085\u0084c"), "abc");
});

test("a carriage return becomes a newline so text cannot overwrite the line, and CRLF stays one newline", () => {
  assert.is(terminalText("Approve? [y]\rDone   "), "Approve? [y]\nDone   ");
  assert.is(terminalText("a\r\nb\r"), "a\nb\n");
});

test("an escape string that never ends is cut at the next newline instead of swallowing the rest", () => {
  assert.is(terminalText(`${ESC}]52;c;AAAA\nthe answer`), "\nthe answer");
});

test("a sequence split across streamed chunks is still removed whole", () => {
  const filter = new TerminalTextFilter();
  const chunks = [`one ${ESC}`, "]52;c;aGVs", "bG8=\x07two ", `${ESC}[`, "2", "J", "three\r", "\nfour"];
  const out = chunks.map((c) => filter.push(c)).join("") + filter.end();
  assert.is(out, "one two three\nfour");
});

test("terminal JSON escapes C1 controls and stays valid JSON", () => {
  const value = { text: "a\u009b2J\u001b[31mb" };
  const json = terminalJson(value);
  assert.not.match(json, /[\u0000-\u001f\u0080-\u009f]/);
  assert.equal(JSON.parse(json), value);
});

test.run();
