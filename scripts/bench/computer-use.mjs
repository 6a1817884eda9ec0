#!/usr/bin/env node
// Benchmark: computer_use (docs/computer-use.md). On the driver's own private Xvfb (1280x800)
// with the GTK test app showing ~50 interactive elements, it measures
//   - capture in som mode (AT-SPI tree + screenshot + numbered marks + PNG), p50 and p95,
//     against a bare screenshot by an external tool in the same run (scrot, else ImageMagick import);
//   - a click round trip: the tool's click on a button until the app reports the click, p50,
//     against a bare `xdotool mousemove … click 1` command reaching the same app.
// Targets: som p50 < 300 ms; click round trip p50 < 50 ms.
//
// Usage (after `npm run build`): node scripts/bench/computer-use.mjs [--runs 20]
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const { DesktopDriver } = await import(join(ROOT, "dist/daemon/computer-use/desktop-driver.js"));
const { computerUseTool } = await import(join(ROOT, "dist/daemon/computer-use/computer-use-tool.js"));
const run = promisify(execFile);
const args = process.argv.slice(2);
const RUNS = Number(args[args.indexOf("--runs") + 1] || 20) || 20;

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};
const fmt = (ms) => `${ms.toFixed(1)} ms`;

const driver = new DesktopDriver({ display: "", screen: "1280x800", env: process.env });
const desktop = await driver.start();
const config = { enabled: true, display: "", screen: "1280x800", max_type_chars: 500 };
const tool = computerUseTool(() => ({ config: () => config, driver: () => driver, logAction: () => undefined }));
const ctx = { cwd: ROOT, sessionId: "bench", signal: new AbortController().signal, env: process.env };
const act = (a) => tool.run(tool.args.parse(a), ctx, {});

const app = spawn(
  "/usr/bin/python3",
  [join(ROOT, "test/fixtures/cua-test-app.py"), "--title", "Bench", "--width", "1280", "--height", "800", "--buttons", "40", "--rows", "12"],
  {
    env: { ...desktop.env, GTK_OVERLAY_SCROLLING: "0" },
    stdio: ["ignore", "pipe", "inherit"],
  },
);
const lines = [];
const waiters = [];
app.stdout.on("data", (d) => {
  for (const l of String(d).split("\n").filter(Boolean)) {
    lines.push(l);
    for (const w of [...waiters]) if (w.re.test(l)) waiters.splice(waiters.indexOf(w), 1), w.resolve();
  }
});
const nextLine = (re) => new Promise((resolve) => waiters.push({ re, resolve }));
const tmp = mkdtempSync(join(tmpdir(), "cua-bench-"));
try {
  for (let i = 0; i < 400 && !lines.some((l) => l.startsWith("ready")); i++) await new Promise((r) => setTimeout(r, 25));
  for (let i = 0; i < 400; i++) {
    const { apps } = await driver.tree();
    if (apps.some((a) => a.windows.some((w) => w.title === "Bench" && w.nodes.length > 40))) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  // Warm up both paths once.
  const first = await act({ action: "capture", mode: "som" });
  const elements = (/: (\d+) element\(s\)/.exec(first.output.text_summary) ?? [])[1];

  const shooter = existsSync("/usr/bin/scrot") ? ["scrot", (f) => ["-o", f]] : ["import", (f) => ["-window", "root", f]];
  const bare = [];
  const som = [];
  for (let i = 0; i < RUNS; i++) {
    let t = performance.now();
    await run(shooter[0], shooter[1](join(tmp, `s${i}.png`)), { env: desktop.env });
    bare.push(performance.now() - t);
    t = performance.now();
    await act({ action: "capture", mode: "som" });
    som.push(performance.now() - t);
  }

  const text = (await act({ action: "capture", mode: "som" })).output.text_summary;
  const buttons = [...text.matchAll(/\[(\d+)\] push button "B(\d+)" at (\d+),(\d+) (\d+)x(\d+)/g)].map((m) => ({
    index: Number(m[1]),
    n: Number(m[2]),
    x: Number(m[3]) + Math.round(Number(m[5]) / 2),
    y: Number(m[4]) + Math.round(Number(m[6]) / 2),
  }));
  const clickTool = [];
  const clickBare = [];
  for (let i = 0; i < RUNS; i++) {
    const b = buttons[i % buttons.length];
    let seen = nextLine(new RegExp(`^button ${b.n}$`));
    let t = performance.now();
    await run("xdotool", ["mousemove", String(b.x), String(b.y), "click", "1"], { env: desktop.env });
    await seen;
    clickBare.push(performance.now() - t);
    seen = nextLine(new RegExp(`^button ${b.n}$`));
    t = performance.now();
    await act({ action: "click", element: b.index });
    await seen;
    clickTool.push(performance.now() - t);
  }

  const [l1] = loadavg();
  console.log(
    `computer_use benchmark, ${new Date().toISOString()}, load ${l1.toFixed(2)}, ${RUNS} runs, display ${desktop.display} 1280x800, ${elements} elements numbered`,
  );
  console.log(`som capture       p50 ${fmt(pct(som, 50))}  p95 ${fmt(pct(som, 95))}   target p50 < 300 ms  ${pct(som, 50) < 300 ? "ok" : "MISSED"}`);
  console.log(`  bare ${shooter[0]} screenshot p50 ${fmt(pct(bare, 50))}; som / bare = ${(pct(som, 50) / pct(bare, 50)).toFixed(2)}x`);
  console.log(
    `click round trip  p50 ${fmt(pct(clickTool, 50))}  p95 ${fmt(pct(clickTool, 95))}   target p50 < 50 ms  ${pct(clickTool, 50) < 50 ? "ok" : "MISSED"}`,
  );
  console.log(`  bare xdotool command round trip p50 ${fmt(pct(clickBare, 50))}; tool / bare = ${(pct(clickTool, 50) / pct(clickBare, 50)).toFixed(2)}x`);
} finally {
  app.kill("SIGKILL");
  driver.stop();
  rmSync(tmp, { recursive: true, force: true });
}
