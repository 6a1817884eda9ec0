#!/usr/bin/env node
// TUI benchmark, in tmux (needs a build: npm run build, and tmux).
//  1. launch to first full frame with the daemon running (target < 400 ms): the TUI's own mark
//     (process start → first frame drawn connected, AGENT_TUI_FIRST_FRAME_FILE) and the time until
//     tmux shows that frame (spawn → capture-pane sees the status bar), median of --runs;
//  2. the TUI's RSS with a 10,000-message session open (target < 200 MB): after opening it (the
//     last page loaded) and after jumping to its first message (all 10,000 loaded), with the time
//     that jump and a PageUp take to show on screen.
// Usage: node scripts/bench/tui.mjs [--runs N] [--messages N]
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../..", import.meta.url));
const option = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i > 0 ? Number(process.argv[i + 1]) : fallback;
};
const runs = option("--runs", 7);
const count = option("--messages", 10_000);
const cli = join(root, "dist", "cli", "main.js");
const { connectDaemon } = await import(join(root, "dist", "shared", "client", "index.js"));
const home = mkdtempSync(join(tmpdir(), "ahb-"));
const socket = `agent-tui-bench-${process.pid}`;
const tmux = (...args) => execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
const env = { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0" };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function waitScreen(name, pattern, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const screen = tmux("capture-pane", "-p", "-t", name);
    if (pattern.test(screen)) return screen;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}:\n${screen}`);
    await sleep(2);
  }
}

function open(name, args, extraEnv = {}) {
  const vars = Object.entries({ AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", ...extraEnv }).map(([k, v]) => `${k}='${v}'`);
  // exec: the pane's pid is the TUI's.
  tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "36", `exec env ${vars.join(" ")} ${process.execPath} ${cli} --tui ${args}`);
  return Number(tmux("display-message", "-p", "-t", name, "#{pane_pid}").trim());
}

const rssMb = (pid) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))[1]) / 1024;

try {
  const started = spawnSync(process.execPath, [cli, "daemon", "start"], { env, stdio: "ignore" });
  if (started.status !== 0) throw new Error("the daemon did not start");
  tmux("new-session", "-d", "-s", "keeper", "sleep 3600");

  // 1. Launch to first frame.
  const own = [];
  const seen = [];
  for (let i = 0; i < runs + 1; i++) {
    const name = `launch${i}`;
    const mark = join(home, `frame-${i}`);
    const t0 = performance.now();
    open(name, "", { AGENT_TUI_FIRST_FRAME_FILE: mark });
    await waitScreen(name, /Type a message[\s\S]*● daemon \d+ │ profile/);
    const t1 = performance.now();
    await sleep(50);
    // The first run warms the file cache; it is not counted.
    if (i > 0) {
      seen.push(t1 - t0);
      own.push(Number(readFileSync(mark, "utf8")));
    }
    tmux("kill-session", "-t", name);
  }
  // Baselines in the same run (the machine's load moves every number): bare node, and a bare
  // blessed screen drawing one box.
  const bare = [];
  const hello = [];
  const helloJs = `const b=require("blessed");const s=b.screen({fullUnicode:true});b.box({parent:s,border:{type:"line"},content:"hello"});s.render();require("fs").writeFileSync(process.env.MARK,String(performance.now()));setTimeout(()=>s.destroy(),50)`;
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    spawnSync(process.execPath, ["-e", "0"]);
    bare.push(performance.now() - t0);
    const mark = join(home, `hello-${i}`);
    tmux("new-session", "-d", "-s", `hello${i}`, "-x", "120", "-y", "36", `cd ${root} && MARK=${mark} exec ${process.execPath} -e '${helloJs}'`);
    for (let w = 0; w < 500; w++) {
      try {
        hello.push(Number(readFileSync(mark, "utf8")));
        break;
      } catch {
        await sleep(10);
      }
    }
    try {
      tmux("kill-session", "-t", `hello${i}`);
    } catch {}
  }
  console.log(`launch → first full frame (daemon running), median of ${runs}:`);
  console.log(`  baseline: node -e 0 (wall): ${median(bare).toFixed(0)} ms; bare blessed screen, process start → drawn: ${median(hello).toFixed(0)} ms`);
  console.log(`  TUI's own mark (process start → frame drawn): ${median(own).toFixed(0)} ms   (target < 400 ms)`);
  console.log(`  seen on screen by tmux (spawn → frame shown): ${median(seen).toFixed(0)} ms`);

  // 2. A long session.
  const client = await connectDaemon({ home, autostart: false });
  const sessionId = (await client.call("chat.sessions.create", { title: "bench" })).session.id;
  for (let k = 0; k < count; k += 1000) {
    const n = Math.min(1000, count - k);
    const messages = Array.from({ length: n }, (_, i) =>
      (k + i) % 2 === 0
        ? { role: "user", content: `question ${k + i}: how does the part ${k + i} of the system work?` }
        : {
            role: "assistant",
            content: `## Answer ${k + i}\n\nIt works like **this**:\n\n- one point\n- another point\n\n\`\`\`js\nconst x = ${k + i};\n\`\`\``,
          },
    );
    await client.call("chat.sessions.append", { sessionId, messages });
  }
  client.close();
  const pid = open("long", `--resume ${sessionId}`);
  await waitScreen("long", new RegExp(`${count} messages`));
  await sleep(300);
  const rssOpen = rssMb(pid);
  let t = performance.now();
  tmux("send-keys", "-t", "long", "Escape");
  await waitScreen("long", /› session s_/);
  tmux("send-keys", "-t", "long", "g");
  await waitScreen("long", /question 0: how/);
  const jump = performance.now() - t;
  await sleep(300);
  const rssAll = rssMb(pid);
  tmux("send-keys", "-t", "long", "G");
  await waitScreen("long", new RegExp(`question ${count - 2}:`));
  const pageTimes = [];
  for (let i = 0; i < 10; i++) {
    const before = tmux("capture-pane", "-p", "-t", "long");
    t = performance.now();
    tmux("send-keys", "-t", "long", "PageUp");
    for (;;) {
      if (tmux("capture-pane", "-p", "-t", "long") !== before) break;
      await sleep(1);
    }
    pageTimes.push(performance.now() - t);
  }
  console.log(`${count}-message session:`);
  console.log(`  RSS after opening (last page loaded):       ${rssOpen.toFixed(0)} MB   (target < 200 MB)`);
  console.log(`  RSS with all ${count} messages loaded:      ${rssAll.toFixed(0)} MB   (target < 200 MB)`);
  console.log(`  jump to the first message (loads them all): ${jump.toFixed(0)} ms`);
  console.log(`  PageUp → screen changed, median of 10:      ${median(pageTimes).toFixed(1)} ms (includes tmux capture)`);
} finally {
  try {
    tmux("kill-server");
  } catch {}
  spawnSync(process.execPath, [cli, "daemon", "stop"], { env, stdio: "ignore" });
  rmSync(home, { recursive: true, force: true });
}
