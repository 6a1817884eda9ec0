#!/usr/bin/env node
// Benchmark: the web dashboard (docs/dashboard.md) in headless Chromium (/usr/bin/chromium,
// playwright-core) against a real daemon on a temp home. Each figure with its baseline from
// the same run:
//   first meaningful paint  navigation to the board drawn with its columns, against a static
//                           page of one heading served by a plain node:http server on loopback
//                           (target: < 500 ms)
//   event arrival           a board event in the page (its EventSource) after `agent kanban
//                           create` returns, p50, against a direct SSE client in this process
//                           (target: p50 < 100 ms); and the card drawn on the board
//   memory                  the page's JS heap (after a GC) on the board after 10,000 board
//                           events (a compressed hour of a busy board), against the heap after
//                           the first 1,000 (target: flat)
//
// Usage (after `npm run build`): node scripts/bench/dashboard.mjs [--samples 15] [--events 10000]
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT } from "./lib/daemon-client.mjs";
import { median } from "./lib/measure.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? Number(args[i + 1]) : fallback;
};
const SAMPLES = opt("samples", 15);
const EVENTS = opt("events", 10_000);
const CHROMIUM = "/usr/bin/chromium";
const CLI = join(ROOT, "dist", "cli", "main.js");
if (!existsSync(CHROMIUM)) {
  console.log(`skipped: ${CHROMIUM} is not installed`);
  process.exit(0);
}

const home = mkdtempSync(join(tmpdir(), "bdash-"));
writeFileSync(join(home, "config.yaml"), "kanban:\n  max_in_progress: 0\n  auto_decompose: false\n");
const cli = (argv) =>
  new Promise((resolve, reject) => {
    execFile(process.execPath, [CLI, ...argv], { cwd: home, env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" } }, (error, stdout, stderr) =>
      error ? reject(new Error(`agent ${argv.join(" ")}: ${stderr}`)) : resolve(stdout),
    );
  });
const p = (xs, q) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
};
const fmt = (ms) => `${ms.toFixed(1)} ms`;

let browser;
let staticServer;
try {
  await cli(["daemon", "start"]);
  const signIn = async () => JSON.parse(await cli(["dashboard", "--no-open", "--json"])).sign_in_url;
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const page = await context.newPage();
  const first = await signIn();
  const base = new URL(first).origin;
  await page.goto(first);
  await page.waitForSelector(".columns");
  const cookie = (await context.cookies(base)).map((c) => `${c.name}=${c.value}`).join("; ");

  // ---- first meaningful paint ----
  staticServer = http.createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html", "cache-control": "no-store" });
    res.end("<!doctype html><html><head><title>static</title></head><body><h1>Board</h1></body></html>");
  });
  await new Promise((r) => staticServer.listen(0, "127.0.0.1", r));
  const staticUrl = `http://127.0.0.1:${staticServer.address().port}/`;
  const paint = [];
  const staticPaint = [];
  for (let i = 0; i < SAMPLES; i++) {
    let t = Date.now();
    await page.goto(staticUrl);
    await page.waitForSelector("h1");
    staticPaint.push(Date.now() - t);
    t = Date.now();
    await page.goto(`${base}/dashboard/`);
    await page.waitForSelector(".columns");
    paint.push(Date.now() - t);
  }

  // ---- event arrival ----
  await page.goto(`${base}/dashboard/`);
  await page.waitForSelector(".columns");
  await page.evaluate(() => {
    window.__arrivals = new Map();
    const s = new EventSource("/api/events");
    s.addEventListener("kanban", (e) => {
      const d = JSON.parse(e.data);
      if (d.type === "created") window.__arrivals.set(d.task_id, Date.now());
    });
    return new Promise((r) => s.addEventListener("hello", r, { once: true }));
  });
  const direct = new Map();
  const sse = await new Promise((resolve) => {
    const req = http.get(`${base}/api/events`, { headers: { cookie } }, (res) => {
      res.setEncoding("utf8");
      let buf = "";
      res.on("data", (chunk) => {
        buf += chunk;
        let end;
        while ((end = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, end);
          buf = buf.slice(end + 2);
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (/^event: kanban$/m.test(block) && data) {
            const d = JSON.parse(data);
            if (d.type === "created") direct.set(d.task_id, Date.now());
          }
        }
      });
      resolve(req);
    });
  });
  const pageAfter = [];
  const directAfter = [];
  const cardAfter = [];
  for (let i = 0; i < SAMPLES; i++) {
    const out = await cli(["kanban", "create", `bench ${i}`, "--json"]);
    const returned = Date.now();
    const id = JSON.parse(out).task.id;
    await page.waitForSelector(`[data-task="${id}"]`);
    cardAfter.push(Date.now() - returned);
    const arrived = await page.evaluate((tid) => window.__arrivals.get(tid), id);
    for (let w = 0; !direct.has(id) && w < 100; w++) await new Promise((r) => setTimeout(r, 10));
    pageAfter.push(arrived - returned);
    directAfter.push(direct.get(id) - returned);
  }
  sse.destroy();

  // ---- memory over many events ----
  const cdp = await context.newCDPSession(page);
  const heap = async () => {
    await cdp.send("HeapProfiler.collectGarbage");
    return (await cdp.send("Runtime.getHeapUsage")).usedSize;
  };
  const target = JSON.parse(await cli(["kanban", "create", "busy", "--json"])).task.id;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 8 });
  const patch = (i) =>
    new Promise((resolve, reject) => {
      const body = JSON.stringify({ priority: i % 7 });
      const req = http.request(
        `${base}/api/plugins/kanban/tasks/${target}`,
        { method: "PATCH", agent, headers: { cookie, "content-type": "application/json", "content-length": Buffer.byteLength(body) } },
        (res) => {
          res.resume();
          res.on("end", () => (res.statusCode === 200 ? resolve() : reject(new Error(`PATCH ${res.statusCode}`))));
        },
      );
      req.on("error", reject);
      req.end(body);
    });
  let sent = 0;
  const burst = async (n) => {
    const end = sent + n;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (sent < end) await patch(sent++);
      }),
    );
    await new Promise((r) => setTimeout(r, 500));
  };
  const heapStart = await heap();
  await burst(Math.min(1000, EVENTS));
  const heap1k = await heap();
  const t0 = Date.now();
  await burst(EVENTS - 1000);
  const burstSeconds = (Date.now() - t0) / 1000;
  const heapEnd = await heap();
  const stillLive = await page.isVisible(`[data-task="${target}"]`);
  agent.destroy();

  const load = loadavg()[0].toFixed(2);
  console.log(`dashboard benchmark  ${new Date().toISOString()}  load ${load}  samples ${SAMPLES}  events ${EVENTS}`);
  console.log(
    `first meaningful paint   p50 ${fmt(median(paint))} (p90 ${fmt(p(paint, 0.9))})  static page ${fmt(median(staticPaint))}  ratio ${(median(paint) / median(staticPaint)).toFixed(2)}  target < 500 ms: ${median(paint) < 500 ? "met" : "NOT met"}`,
  );
  console.log(
    `event after CLI returns  page p50 ${fmt(median(pageAfter))} (p90 ${fmt(p(pageAfter, 0.9))})  direct SSE p50 ${fmt(median(directAfter))}  difference ${fmt(median(pageAfter) - median(directAfter))}  target p50 < 100 ms: ${median(pageAfter) < 100 ? "met" : "NOT met"}`,
  );
  console.log(`card drawn after CLI      p50 ${fmt(median(cardAfter))} (p90 ${fmt(p(cardAfter, 0.9))})`);
  console.log(
    `page JS heap              start ${(heapStart / 1e6).toFixed(2)} MB  after 1,000 events ${(heap1k / 1e6).toFixed(2)} MB  after ${EVENTS.toLocaleString()} ${(heapEnd / 1e6).toFixed(2)} MB  ratio ${(heapEnd / heap1k).toFixed(2)} (${burstSeconds.toFixed(1)} s for ${EVENTS - 1000} events; board still drawn: ${stillLive})`,
  );
} finally {
  await browser?.close();
  staticServer?.close();
  await cli(["daemon", "stop"]).catch(() => undefined);
  rmSync(home, { recursive: true, force: true });
}
