#!/usr/bin/env node
// Benchmark: the Graph change-notification listener's answer time (docs/messaging.md#teams).
// The built listener (dist/) with every check on (source CIDRs through ipaddr.js, the client
// state, accepted resources, the duplicate memory) against a bare node:http server that reads
// the same body and answers 202 (the baseline), in the same run, over one keep-alive connection
// each. The listener's work after the 202 is made slow on purpose (200 ms per notification) to
// show the answer never waits for it. Also: the validation handshake's answer time.
//
// Usage (after `npm run build`): node scripts/bench/msgraph-webhook.mjs [--requests 400]
import { createServer } from "node:http";
import { loadavg } from "node:os";
import { Agent, request } from "node:http";

const args = process.argv.slice(2);
const N = Number(args[args.indexOf("--requests") + 1] || 400) || 400;
const { NotificationListenerAccess } = await import("../../dist/daemon/http/access.js");
const { MsgraphWebhook, NOTIFICATIONS_PATH } = await import("../../dist/daemon/messaging/teams/msgraph-webhook.js");

const STATE = "bench-client-state-0123456789";
let handed = 0;
const access = await NotificationListenerAccess.create({ bindHost: "127.0.0.1", clientState: STATE, cidrs: ["52.96.0.0/14", "2603:1000::/25", "127.0.0.0/8"] });
const hook = new MsgraphWebhook({
  host: "127.0.0.1",
  port: 0,
  access,
  acceptedResources: ["communications/onlineMeetings*/transcripts*"],
  onAccepted: async (list) => {
    await new Promise((r) => setTimeout(r, 200));
    handed += list.length;
  },
  onRefused: () => {},
});
await hook.start();

const baseline = createServer((req, res) => {
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("end", () => {
    JSON.parse(Buffer.concat(chunks).toString("utf8"));
    res.writeHead(202, { "content-length": "0" });
    res.end();
  });
});
await new Promise((r) => baseline.listen(0, "127.0.0.1", r));

const body = (i) =>
  JSON.stringify({
    value: [
      {
        subscriptionId: "sub-bench",
        changeType: "created",
        clientState: STATE,
        tenantId: "t",
        resource: `communications/onlineMeetings('meeting-${i}')/transcripts('transcript-${i}')`,
        resourceData: { id: `transcript-${i}`, "@odata.type": "#Microsoft.Graph.callTranscript" },
      },
    ],
  });

const agent = new Agent({ keepAlive: true, maxSockets: 1 });
function post(url, payload) {
  return new Promise((resolve, reject) => {
    const t = process.hrtime.bigint();
    const req = request(
      url,
      { method: "POST", agent, headers: { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, ms: Number(process.hrtime.bigint() - t) / 1e6 }));
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

let sent = 0;
let beforeWork = 0;
async function series(url, make, notifications = false) {
  const times = [];
  for (let i = 0; i < 20; i++) await post(url, make(-i - 1)); // warm-up
  for (let i = 0; i < N; i++) {
    const r = await post(url, make(i));
    // This notification's 202 arrived while its own work (200 ms) was still pending.
    if (notifications && handed < ++sent + 20) beforeWork++;
    if (r.status !== 202 && r.status !== 200) throw new Error(`HTTP ${r.status}`);
    times.push(r.ms);
  }
  times.sort((a, b) => a - b);
  return { p50: times[Math.floor(N * 0.5)], p95: times[Math.floor(N * 0.95)] };
}

const load = loadavg()[0].toFixed(1);
const base = await series(`http://127.0.0.1:${baseline.address().port}/`, body);
const listener = await series(`${hook.url}${NOTIFICATIONS_PATH}`, body, true);
const validation = await series(`${hook.url}${NOTIFICATIONS_PATH}?validationToken=bench-token`, () => "");
await hook.settled();
const f = (n) => n.toFixed(2);
console.log(`msgraph-webhook bench, ${N} requests each, ${new Date().toISOString()}, load average ${load}`);
console.log(`baseline (node:http, read body, JSON.parse, 202)   p50 ${f(base.p50)} ms  p95 ${f(base.p95)} ms`);
console.log(
  `listener notification → 202                       p50 ${f(listener.p50)} ms  p95 ${f(listener.p95)} ms  (ratio p50 ${f(listener.p50 / base.p50)}x, p95 ${f(listener.p95 / base.p95)}x)`,
);
console.log(
  `listener validation handshake → 200               p50 ${f(validation.p50)} ms  p95 ${f(validation.p95)} ms  (ratio p50 ${f(validation.p50 / base.p50)}x)`,
);
console.log(`notifications whose 202 arrived before their own (200 ms) work finished: ${beforeWork} of ${N}; all ${handed} handed on after`);
agent.destroy();
await hook.stop();
baseline.close();
