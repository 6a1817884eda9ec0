#!/usr/bin/env node
// TUI highlighting benchmark (needs a build: npm run build). A 400-line TypeScript code block in
// an assistant answer, drawn for the first time in a fresh process: rendered to tagged lines
// (tui/markdown.ts) and drawn by blessed on an off-screen 120x40 screen, with the fence's language
// (highlighted: highlight.js's core and the language loaded on first use) against the same block
// as plain text (the baseline, drawn in one colour). Target: highlighting adds < 30 ms to the first
// draw. Also the second draw of an edited answer (a streaming delta), warm.
// Usage: node scripts/bench/tui-highlight.mjs [--runs N] [--lines N]
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { join } from "node:path";
import { loadavg } from "node:os";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const runs = option("--runs", 9);
const lines = option("--lines", 400);
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

if (process.argv[2] === "--child") {
  const lang = process.argv[3];
  const n = Number(process.argv[4]);
  const { PassThrough } = await import("node:stream");
  const blessed = (await import("blessed")).default;
  const { renderMarkdown } = await import(join(root, "dist", "tui", "markdown.js"));
  const { onHighlighted, prepareHighlighter } = await import(join(root, "dist", "tui", "highlight.js"));
  // As the TUI does after its first frame: the worker is started before anything is drawn.
  prepareHighlighter();
  await new Promise((r) => setTimeout(r, 200));
  const { setTheme } = await import(join(root, "dist", "tui", "theme.js"));
  setTheme({ setting: "dark", depth: "256" });
  const body = [];
  for (let i = 0; i < n; i++) {
    const k = i % 5;
    body.push(
      k === 0
        ? `export function step${i}(items: Item[], limit = ${i}): number {`
        : k === 1
          ? `  // keep the first ${i} items whose price is "known"`
          : k === 2
            ? `  const kept = items.filter((item) => item.price !== null && item.id < limit);`
            : k === 3
              ? `  return kept.reduce((sum, item) => sum + item.price * 1.25, 0); /* cents */`
              : "}",
    );
  }
  const md = `Here is the code:\n\n\`\`\`${lang}\n${body.join("\n")}\n\`\`\`\n\nDone.`;
  const output = new PassThrough();
  output.on("data", () => undefined);
  Object.assign(output, { isTTY: true, columns: 120, rows: 40 });
  const screen = blessed.screen({ input: new PassThrough(), output, terminal: "xterm-256color", fullUnicode: true, warnings: false });
  const box = blessed.box({ parent: screen, width: "100%", height: "100%", tags: true });
  const draw = (text) => {
    const t0 = performance.now();
    box.setContent(renderMarkdown(text, 118).join("\n"));
    screen.render();
    return performance.now() - t0;
  };
  const start = performance.now();
  const highlighted = new Promise((resolve) => onHighlighted(() => resolve(performance.now())));
  const first = draw(md);
  // A large block is highlighted in a worker thread: the time until it is, and the draw then.
  let ready = null;
  let then = null;
  if (lang !== "text") {
    ready = (await highlighted) - start;
    then = draw(md);
  }
  const second = draw(`${md}\nmore`);
  screen.destroy();
  process.stdout.write(JSON.stringify({ first, second, ready, then }));
  process.exit(0);
}

const script = fileURLToPath(import.meta.url);
const one = (lang) => {
  const r = spawnSync(process.execPath, [script, "--child", lang, String(lines)], { encoding: "utf8" });
  if (r.status !== 0) throw new Error(r.stderr);
  return JSON.parse(r.stdout);
};
const plain = [];
const lit = [];
for (let i = 0; i < runs; i++) {
  // Alternated, so load changes fall on both alike.
  plain.push(one("text"));
  lit.push(one("ts"));
}
const pf = median(plain.map((r) => r.first));
const hf = median(lit.map((r) => r.first));
const ps = median(plain.map((r) => r.second));
const hs = median(lit.map((r) => r.second));
console.log(
  `tui-highlight: a ${lines}-line code block, first draw in a fresh process (median of ${runs}), ${new Date().toISOString()}, load ${loadavg()[0].toFixed(2)}`,
);
console.log(`  plain (baseline):   ${pf.toFixed(1)} ms`);
console.log(
  `  highlighted (ts):   ${hf.toFixed(1)} ms   ratio ${(hf / pf).toFixed(2)}   adds ${(hf - pf).toFixed(1)} ms   (target < 30 ms) ${hf - pf < 30 ? "ok" : "MISSED"}`,
);
const ready = median(lit.map((r) => r.ready));
const then = median(lit.map((r) => r.then));
console.log(`  highlighted by the worker ${ready.toFixed(1)} ms after the first draw began; that draw ${then.toFixed(1)} ms`);
console.log(`  redraw after a delta, plain ${ps.toFixed(1)} ms, highlighted ${hs.toFixed(1)} ms   ratio ${(hs / ps).toFixed(2)}`);
