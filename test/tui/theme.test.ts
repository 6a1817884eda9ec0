import { PassThrough } from "node:stream";
import blessed from "blessed";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { highlightCode, onHighlighted } from "../../tui/highlight.js";
import { renderMarkdown } from "../../tui/markdown.js";
import { tagsToAnsi } from "../../tui/markdown-ansi.js";
import { color, colorDepth, fg, installTruecolor, ROLES, setTheme, themeFromColorFgBg, themeFromOsc11 } from "../../tui/theme.js";

/** Issue 36: the palette (tui/theme.ts), highlighting (tui/highlight.ts) and tables in the Markdown renderer. */

/** A tagged line's text: tags dropped, escaped braces back. */
const strip = (line: string) =>
  line
    .replace(/\{(open|close)\}/g, (m) => (m === "{open}" ? "\u0001" : "\u0002"))
    .replace(/\{[^{}]*\}/g, "")
    .replace(/\u0001/g, "{")
    .replace(/\u0002/g, "}");

test.after.each(() => setTheme({ depth: "256" }));

test("colour depth: NO_COLOR wins, COLORTERM=truecolor is 24-bit, -256color is 256, else 8", () => {
  assert.is(colorDepth({ NO_COLOR: "1", COLORTERM: "truecolor", TERM: "xterm-256color" }), "none");
  assert.is(colorDepth({ COLORTERM: "truecolor", TERM: "xterm-256color" }), "truecolor");
  assert.is(colorDepth({ COLORTERM: "24bit", TERM: "xterm" }), "truecolor");
  assert.is(colorDepth({ TERM: "xterm-256color" }), "256");
  assert.is(colorDepth({ TERM: "xterm" }), "8");
  assert.is(colorDepth({ TERM: "dumb" }), "none");
  // An empty NO_COLOR is unset (no-color.org).
  assert.is(colorDepth({ NO_COLOR: "", TERM: "xterm-256color" }), "256");
});

test("the terminal's background picks the theme; display.theme overrides it", () => {
  assert.is(themeFromOsc11("\x1b]11;rgb:ffff/ffff/ffff"), "light");
  assert.is(themeFromOsc11("\x1b]11;rgb:0d0d/1111/1717"), "dark");
  assert.is(themeFromOsc11(""), null);
  assert.is(themeFromColorFgBg("0;15"), "light");
  assert.is(themeFromColorFgBg("15;0"), "dark");
  assert.is(themeFromColorFgBg(undefined), null);
  setTheme({ setting: "auto", detected: "light", depth: "256" });
  const light = color("text");
  setTheme({ setting: "dark", detected: "light", depth: "256" });
  assert.is.not(color("text"), light);
});

test("no colour under NO_COLOR; the 8-colour palette has no black and no blue", () => {
  setTheme({ depth: "none" });
  for (const role of ROLES) assert.is(fg(role), "", role);
  for (const theme of ["dark", "light"]) {
    setTheme({ setting: theme, depth: "8" });
    for (const role of ROLES) assert.not.ok(["black", "blue"].includes(color(role) ?? ""), `${theme} ${role} is ${color(role)}`);
  }
  setTheme({ setting: "dark", depth: "256" });
  assert.is.not(color("chromeBg"), "#0000ff");
  assert.is.not(color("chromeBg"), "blue");
});

test("a code block is highlighted in its language: several colours, the text unchanged", () => {
  const code = 'export function total(items: Item[]): number {\n  // sum\n  return items.reduce((s, i) => s + i.price, 0); // "x"\n}';
  const lines = renderMarkdown(`\`\`\`ts\n${code}\n\`\`\``, 100);
  const colours = new Set(lines.join("").match(/\{#[0-9a-f]{6}-fg\}/g));
  assert.ok(colours.size > 3, `colours: ${[...colours].join(" ")}`);
  assert.equal(
    lines.slice(1, 5).map((l) => strip(l).slice(2)),
    code.split("\n"),
  );
  // A diff by its marks; an unknown language in one colour.
  const diff = highlightCode("@@ -1 +1 @@\n-a\n+b", "diff")!;
  assert.is.not(diff[1]![0]!.style, diff[2]![0]!.style);
  assert.is(highlightCode("x", "no-such-language"), null);
});

test("a large block is drawn in one colour first, highlighted in the worker, then drawn highlighted", async () => {
  const code = Array.from({ length: 200 }, (_, i) => `const v${i} = "s" + ${i}; // c`).join("\n");
  assert.is(highlightCode(code, "js"), null, "not highlighted on the draw path");
  const done = new Promise<string>((resolve) => {
    const off = onHighlighted((c) => {
      off();
      resolve(c);
    });
  });
  assert.is(await done, code);
  const lines = highlightCode(code, "js")!;
  assert.is(lines.length, 200);
  assert.ok(new Set(lines[0]!.map((r) => r.style)).size >= 3);
});

test("tables: no blank row after the header rule; too wide, cells are cut with …", () => {
  const md = "| name | description |\n|---|---|\n| a | the first one |\n| b | the second, with a much longer description than fits |\n";
  const wide = renderMarkdown(md, 100).map(strip);
  assert.match(wide[1]!, /^─+┼─+$/);
  assert.match(wide[2]!, /^a +│ the first one$/);
  const narrow = renderMarkdown(md, 40).map(strip);
  for (const line of narrow) assert.ok(line.length <= 40, `${line.length}: ${line}`);
  assert.match(narrow[3]!, /^b +│ the second.*…$/);
  assert.match(narrow[2]!, /│ the first one/);
});

test("truecolor: the palette's colours are written as 24-bit SGR", () => {
  setTheme({ setting: "dark", depth: "truecolor" });
  const output = new PassThrough();
  let written = "";
  output.on("data", (b: Buffer) => {
    written += b.toString();
  });
  Object.assign(output, { isTTY: true, columns: 40, rows: 5 });
  const screen = blessed.screen({ input: new PassThrough(), output, terminal: "xterm-256color", warnings: false });
  installTruecolor(screen);
  blessed.box({ parent: screen, width: "100%", height: 1, tags: true, content: `${fg("error")}boom{/}` });
  screen.render();
  screen.destroy();
  const n = Number.parseInt(color("error")!.slice(1), 16);
  assert.ok(written.includes(`38;2;${n >> 16};${(n >> 8) & 255};${n & 255}`), JSON.stringify(written.slice(0, 400)));
});

test("line-mode chat: palette tags become SGR, and nothing without colour", () => {
  assert.match(tagsToAnsi(`${fg("muted")}x{/}`, true), /\x1b\[38;5;\d+mx\x1b\[0m/);
  assert.is(tagsToAnsi(`${fg("muted")}x{/}`, false), "x");
});

test.run();
