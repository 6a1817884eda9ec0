#!/usr/bin/env node
// Benchmark: actors at scale (README "Benchmarks"). Starts real daemons on temp homes and
// prints each figure of the targets with its ratio:
//   creation rate over HTTP (16 concurrent PUT /actors) for the first 1k, the last 10% and
//   overall; RSS with every actor asleep; boot with all asleep and with 1k awake at the last
//   stop, each against an empty home; a graceful stop with K awake; 64 clients over K awake
//   actors against 64 clients on one actor (same run); a concurrent action's p99 while K actors
//   fall asleep together; wake p50 against a warm call; key lookup and a page of a listing;
//   files and bytes per actor on disk.
//
// Usage (after `npm run build`):
//   node scripts/bench/actor-scale.mjs [--actors 100000] [--keepers 10000] [--seconds 5]
//          [--concurrency 16] [--keep]
// --keepers K: the actors used for the storm, the throughput and the stop (default: 10,000,
// at most half of --actors). Smaller runs finish sooner (e.g. --actors 20000).
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { agentCli, jsonClient } from "./lib/daemon-client.mjs";

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const N = Number(opt("actors", 100_000));
const K = Math.min(Number(opt("keepers", 10_000)), Math.floor(N / 2));
const SECONDS = Number(opt("seconds", 5));
const CREATE_CONCURRENCY = Number(opt("concurrency", 16));

const MODULE = `export const scale = {
  state: { n: 0 },
  options: { sleepTimeout: 1500 },
  actions: { inc: (c) => ++c.state.n, get: (c) => c.state.n },
};
export const keeper = {
  state: { n: 0 },
  options: { sleepTimeout: 600000 },
  actions: {
    inc: (c) => ++c.state.n,
    // Fall asleep at ts (the same moment for every keeper: a sleep storm).
    napAt: (c, ts) => void setTimeout(() => c.sleep(), Math.max(0, ts - Date.now())),
  },
};
export const hot = {
  state: { n: 0 },
  options: { noSleep: true },
  actions: { inc: (c) => ++c.state.n },
};
`;

const results = [];
const report = (figure, value, target, ok) => {
  results.push({ figure, value, target, ok });
  console.log(`${ok === undefined ? " " : ok ? "✓" : "✗"} ${figure}: ${value}${target ? `  (target ${target})` : ""}`);
};
const fmt = (x, d = 1) => (Number.isFinite(x) ? x.toFixed(d) : String(x));

// ---------- daemon ----------

const cli = agentCli;

function newHome(withModule = true) {
  const home = mkdtempSync(join(tmpdir(), "agent-scale-"));
  if (withModule) {
    mkdirSync(join(home, "actors"), { recursive: true });
    writeFileSync(join(home, "actors", "scale.js"), MODULE);
  }
  return home;
}

/** Start the daemon; resolves with its pid, gateway and the start's wall time (until ready). */
async function start(home) {
  const t0 = performance.now();
  await cli(home, ["daemon", "start", "--json"]);
  const ms = performance.now() - t0;
  const s = JSON.parse(await cli(home, ["daemon", "status", "--json"]));
  return { pid: s.pid, base: s.gateway_url, ms };
}

async function stop(home) {
  const t0 = performance.now();
  await cli(home, ["daemon", "stop"]);
  return performance.now() - t0;
}

function rssMb(pid) {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) / 1024 : NaN;
}

// ---------- HTTP ----------

const request = jsonClient(128);
const action = (base, id, name, argv = []) => request(base, "POST", `/gateway/${id}/action/${name}`, { args: argv });
const create = (base, name, key) =>
  request(base, "PUT", "/actors", { name, key, runner_name_selector: "default", crash_policy: "sleep" }).then((r) => r.actor.actor_id);

/** Run `fn(i)` for i in [from, to) with `concurrency` workers; returns the latencies (ms). */
async function pool(from, to, concurrency, fn) {
  let next = from;
  const lat = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < to) {
        const i = next++;
        const t0 = performance.now();
        await fn(i);
        lat.push(performance.now() - t0);
      }
    }),
  );
  return lat;
}

/** `concurrency` clients calling `pick()`'s actor for `seconds`: requests/s. */
async function throughput(base, pick, seconds, concurrency = 64) {
  let ok = 0;
  const deadline = performance.now() + seconds * 1000;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) {
        await action(base, pick(), "inc");
        ok++;
      }
    }),
  );
  return ok / ((performance.now() - t0) / 1000);
}

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor(s.length * p))] : NaN;
};
const sleepMs = (ms) => new Promise((r) => setTimeout(r, ms));

/** Wait until the sampled actors are all asleep. */
async function waitAsleep(base, ids, timeoutMs = 120_000) {
  const sample = ids.length <= 32 ? ids : Array.from({ length: 32 }, (_, i) => ids[Math.floor((i * ids.length) / 32)]);
  const end = Date.now() + timeoutMs;
  while (Date.now() < end) {
    const { actors } = await request(base, "GET", `/actors?actor_ids=${sample.join(",")}`);
    if (actors.every((a) => a.sleep_ts !== null)) return;
    await sleepMs(200);
  }
  throw new Error("actors did not fall asleep");
}

function diskUsage(dir) {
  let files = 0;
  let bytes = 0;
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else {
        // A file may go away meanwhile (a temp file of a background write).
        const st = statSync(p, { throwIfNoEntry: false });
        if (!st) continue;
        files++;
        bytes += st.size;
      }
    }
  };
  walk(dir);
  return { files, bytes };
}

// ---------- run ----------

async function main() {
  console.log(
    `actor-scale: ${N} actors (${K} keepers), node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(1))
      .join(" ")}`,
  );

  // Empty-home boot (median of 3), the baseline of the boot ratios.
  const emptyBoots = [];
  for (let i = 0; i < 3; i++) {
    const h = newHome(false);
    const d = await start(h);
    emptyBoots.push(d.ms);
    await stop(h);
    rmSync(h, { recursive: true, force: true });
  }
  const emptyBoot = pct(emptyBoots, 0.5);
  report("boot of an empty home", `${fmt(emptyBoot, 0)} ms`);

  const home = newHome();
  const dataDir = join(home, "data", "actors");
  let d = await start(home);
  const keepers = [];
  const scale = [];
  try {
    // Creation: the keepers first (then put to sleep), then the rest.
    const tAll = performance.now();
    const first = await pool(0, K, CREATE_CONCURRENCY, async (i) => void (keepers[i] = await create(d.base, "keeper", `k${i}`)));
    const rate1k = 1000 / (first.slice(0, 1000).reduce((a, b) => a + b, 0) / CREATE_CONCURRENCY / 1000);
    const napAt = Date.now() + 500;
    await pool(0, K, 64, (i) => action(d.base, keepers[i], "napAt", [napAt]));
    const lastFrom = Math.floor(N * 0.9);
    let tLast = 0;
    await pool(K, N, CREATE_CONCURRENCY, async (i) => {
      if (i === lastFrom) tLast = performance.now();
      scale[i - K] = await create(d.base, "scale", `s${i}`);
    });
    const tEnd = performance.now();
    const overall = N / ((tEnd - tAll) / 1000);
    const rateLast = (N - lastFrom) / ((tEnd - tLast) / 1000);
    report("creation rate, first 1k", `${fmt(rate1k, 0)}/s`);
    report(
      `creation rate, ${fmt(lastFrom / 1000, 0)}k-${fmt(N / 1000, 0)}k`,
      `${fmt(rateLast, 0)}/s, ${fmt(rate1k / rateLast, 2)}x slower than the first 1k`,
      "≤ 1.5x",
      rate1k / rateLast <= 1.5,
    );
    report("creation rate, overall", `${fmt(overall, 0)}/s (${fmt((tEnd - tAll) / 1000, 1)} s)`, "≥ 1000/s", overall >= 1000);

    await waitAsleep(d.base, keepers);
    await waitAsleep(d.base, scale.slice(-64));
    // V8 gives the burst's garbage back to the system once the daemon idles for a few seconds;
    // the daemon's own compaction waits until its background folds of the burst are done too.
    // Both readings are printed: 10 s after the burst, and once the daemon has been left alone
    // for 40 s (the resting figure the target is about).
    await sleepMs(10_000);
    const rssSoon = rssMb(d.pid);
    await sleepMs(30_000);
    const rssRest = rssMb(d.pid);
    report(
      `daemon RSS, ${N} actors asleep (the creating run)`,
      `${fmt(rssRest, 0)} MB after 40 s quiet (${fmt(rssSoon, 0)} MB 10 s after the burst)`,
      "< 300 MB",
      rssRest < 300,
    );

    // Lookup and paging.
    const lk = [];
    for (let i = 0; i < 200; i++) {
      const k = `s${K + Math.floor(Math.random() * (N - K))}`;
      const t0 = performance.now();
      const r = await request(d.base, "GET", `/actors?name=scale&key=${k}`);
      lk.push(performance.now() - t0);
      if (r.actors.length !== 1) throw new Error(`lookup of ${k} found ${r.actors.length}`);
    }
    const pageFirst = [];
    const pageDeep = [];
    let cursor = null;
    for (let p = 0; p < 100; p++) {
      const t0 = performance.now();
      const r = await request(d.base, "GET", `/actors?name=scale&limit=100${cursor ? `&cursor=${cursor}` : ""}`);
      (p < 5 ? pageFirst : pageDeep).push(performance.now() - t0);
      cursor = r.pagination.cursor;
      if (!cursor) break;
    }
    const t0 = performance.now();
    await request(d.base, "GET", `/actors?name=keeper&limit=10`);
    const smallList = performance.now() - t0;
    const healths = [];
    for (let i = 0; i < 100; i++) {
      const t = performance.now();
      await request(d.base, "GET", "/health");
      healths.push(performance.now() - t);
    }
    report(
      "GET /actors?name=&key= p50",
      `${fmt(pct(lk, 0.5), 2)} ms (GET /health ${fmt(pct(healths, 0.5), 2)} ms: ${fmt(pct(lk, 0.5) / pct(healths, 0.5), 2)}x)`,
    );
    report(
      "GET /actors?name=&limit=100 p50",
      `first pages ${fmt(pct(pageFirst, 0.5), 2)} ms, pages 5-100 ${fmt(pct(pageDeep, 0.5), 2)} ms (limit=10 of another name: ${fmt(smallList, 2)} ms)`,
    );

    // Wake: sleeping actors, one at a time, against warm calls.
    const wakes = [];
    const warm = [];
    for (let i = 0; i < 200; i++) {
      const id = scale[Math.floor(Math.random() * (scale.length - 100))];
      let t = performance.now();
      await action(d.base, id, "get");
      wakes.push(performance.now() - t);
      t = performance.now();
      await action(d.base, id, "get");
      warm.push(performance.now() - t);
    }
    report(
      `wake p50 at ${N} actors`,
      `${fmt(pct(wakes, 0.5), 2)} ms (warm call ${fmt(pct(warm, 0.5), 2)} ms: ${fmt(pct(wakes, 0.5) / pct(warm, 0.5), 1)}x)`,
      "< 5 ms",
      pct(wakes, 0.5) < 5,
    );

    // Throughput: 64 clients over K awake keepers against 64 clients on one actor.
    await pool(0, K, 64, (i) => action(d.base, keepers[i], "inc"));
    const hot = await create(d.base, "hot", "hot");
    await throughput(d.base, () => hot, 1);
    const single = await throughput(d.base, () => hot, SECONDS);
    const spread = await throughput(d.base, () => keepers[Math.floor(Math.random() * K)], SECONDS);
    report(
      `64 clients over ${K} awake actors`,
      `${fmt(spread, 0)} req/s vs one actor ${fmt(single, 0)} req/s: ${fmt(spread / single, 2)}x`,
      "≥ 0.5x",
      spread / single >= 0.5,
    );

    // Sleep storm: every keeper falls asleep at the same moment; 4 clients call `hot` meanwhile.
    // The moment is set far enough ahead for every keeper to hear of it first (on a loaded
    // machine 10k calls take seconds): a storm that began during the calls would not be one.
    let stormAt = 0;
    for (let margin = 2000; ; margin *= 2) {
      const tw = performance.now();
      await pool(0, K, 64, (i) => action(d.base, keepers[i], "inc"));
      stormAt = Date.now() + Math.max(margin, 1.25 * (performance.now() - tw));
      await pool(0, K, 64, (i) => action(d.base, keepers[i], "napAt", [stormAt]));
      if (Date.now() < stormAt - 200) break;
      await waitAsleep(d.base, keepers);
    }
    const stormLat = [];
    let storming = true;
    const done = waitAsleep(d.base, keepers).finally(() => (storming = false));
    while (Date.now() < stormAt - 200) await sleepMs(20);
    const tStorm = performance.now();
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (storming) {
          const t = performance.now();
          await action(d.base, hot, "inc");
          stormLat.push(performance.now() - t);
        }
      }),
    );
    await done;
    report(
      `action p99 while ${K} actors fall asleep`,
      `${fmt(pct(stormLat, 0.99), 1)} ms (p50 ${fmt(pct(stormLat, 0.5), 2)} ms, ${stormLat.length} calls, storm ${fmt((performance.now() - tStorm) / 1000, 1)} s)`,
      "< 50 ms",
      pct(stormLat, 0.99) < 50,
    );

    // Disk.
    const du = diskUsage(dataDir);
    report(
      "disk per actor",
      `${fmt(du.files / N, 2)} files, ${fmt(du.bytes / N, 0)} bytes (${du.files} files, ${fmt(du.bytes / 1048576, 1)} MB in data/actors)`,
    );

    // Boot with everything asleep (the hot actor never sleeps: it is put to sleep by the stop).
    await request(d.base, "DELETE", `/actors/${hot}`);
    await stop(home);
    // The start, then at once an action on an existing actor (the gateway read from the ready
    // line of the log, so no other command runs in between): the index is loaded after the
    // ready report, so this is what a first caller waits for.
    const tBoot = performance.now();
    await cli(home, ["daemon", "start", "--json"]);
    const bootAsleep = performance.now() - tBoot;
    const ready = readFileSync(join(home, "logs", "daemon.log"), "utf8")
      .trim()
      .split("\n")
      .reverse()
      .map((l) => JSON.parse(l))
      .find((l) => l.msg === "daemon ready");
    await action(ready.gateway, scale[Math.floor(scale.length / 2)], "get");
    const firstAction = performance.now() - tBoot;
    const status = JSON.parse(await cli(home, ["daemon", "status", "--json"]));
    d = { pid: status.pid, base: status.gateway_url, ms: bootAsleep };
    report(`boot with ${N} asleep`, `${fmt(bootAsleep, 0)} ms: ${fmt(bootAsleep / emptyBoot, 2)}x an empty home`, "< 1.5x", bootAsleep / emptyBoot < 1.5);
    report(
      `first action on an existing actor after that start`,
      `${fmt(firstAction, 0)} ms from the start (${fmt(firstAction - bootAsleep, 0)} ms after ready)`,
    );
    await sleepMs(1000);
    report(`daemon RSS, ${N} actors asleep (after a restart)`, `${fmt(rssMb(d.pid), 0)} MB`, "< 300 MB", rssMb(d.pid) < 300);

    // Boot with 1k awake at the last stop.
    await pool(0, Math.min(1000, K), 64, (i) => action(d.base, keepers[i], "inc"));
    await stop(home);
    d = await start(home);
    const boot1k = d.ms;
    report(
      `boot with ${Math.min(1000, K)} awake at the last stop`,
      `${fmt(boot1k, 0)} ms: ${fmt(boot1k / emptyBoot, 2)}x an empty home`,
      "< 3x",
      boot1k / emptyBoot < 3,
    );

    // Graceful stop with K awake.
    await pool(0, K, 64, (i) => action(d.base, keepers[i], "inc"));
    const stopMs = await stop(home);
    report(`graceful stop with ${K} awake`, `${fmt(stopMs / 1000, 2)} s`, "< 5 s", stopMs < 5000);
  } finally {
    await cli(home, ["daemon", "stop"]).catch(() => undefined);
    request.close();
    const failed = results.filter((r) => r.ok === false);
    console.log(
      `${results.filter((r) => r.ok).length} targets met, ${failed.length} missed; load average now ${loadavg()
        .map((x) => x.toFixed(1))
        .join(" ")}`,
    );
    // Removing 100k actors' files takes a while on a slow disk.
    if (!args.includes("--keep")) rmSync(home, { recursive: true, force: true });
    else console.log(`home kept: ${home}`);
  }
}

await main();
