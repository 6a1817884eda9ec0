// A generated run of malformed requests (bad JSON, wrong types, huge bodies, bad base64 KV keys,
// unknown encodings, path tricks, bad ids, garbage CBOR/BARE) gets only 4xx answers, and the
// daemon stays up.
import http from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { call, putActor, startDaemon, type TestDaemon } from "./daemon.js";

interface Bad {
  method: string;
  path: string;
  headers?: Record<string, string>;
  body?: Buffer | string;
}

/** Deterministic PRNG (mulberry32). */
function rng(seed: number) {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function generate(id: string, workerId: string, count: number): Bad[] {
  const rand = rng(42);
  const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
  const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(rand() * 256)));
  const json = { "content-type": "application/json" };
  const badJson = [
    '{"args":',
    "{args:[1]}",
    "[",
    "nul",
    '{"args":[1,]}',
    "\u0000",
    '{"a":1}}',
    "'x'",
    '{"args":["$Nope", 1]}',
    '{"args":[["$BigInt","x1"]]}',
    '{"args":[["$Uint8Array","!!"]]}',
  ];
  const wrongArgs = [{ args: "x" }, { args: 1 }, { args: null }, { args: { a: 1 } }, {}, { arg: [] }, { args: [], more: true }, [], "args", 12, null];
  const wrongCreate = [
    { name: 1, key: "k", crash_policy: "sleep", runner_name_selector: "default" },
    { name: "counter", key: 5, crash_policy: "sleep", runner_name_selector: "default" },
    { name: "counter", key: "k", crash_policy: "boom", runner_name_selector: "default" },
    { name: "counter", key: "k", crash_policy: 1, runner_name_selector: "default" },
    { name: "counter", key: "k", crash_policy: "sleep", runner_name_selector: 7 },
    { name: "counter", key: "k", crash_policy: "sleep", runner_name_selector: "default", input: "***" },
    { name: "counter", key: "k", crash_policy: "sleep", runner_name_selector: "default", input: 42 },
    { name: "counter", key: "k", crash_policy: "sleep", runner_name_selector: "default", input: "AAAA" },
    { name: "counter", key: "k".repeat(200), crash_policy: "sleep", runner_name_selector: "default" },
    { name: "", key: "k", crash_policy: "sleep", runner_name_selector: "default" },
    { name: "missing_actor", key: "k", crash_policy: "sleep", runner_name_selector: "default" },
    { name: "counter", key: "k", crash_policy: "sleep", runner_name_selector: "default", datacenter: 5 },
  ];
  const badIds = ["", "%00", "..", "%2e%2e", "a%2Fb", "x".repeat(300), "%E2%98%83", "@@@", "%zz", "id%20with%20space", "nosuchactor", "a;b", "%3Cscript%3E"];
  const traversal = [
    `/gateway/${id}/../../actors`,
    `/gateway/${id}/%2e%2e/%2e%2e/actors`,
    `/gateway/${id}/request/../../etc/passwd`,
    `/gateway/${id}/request/%2e%2e/%2e%2e/etc/passwd`,
    `/gateway/${id}/request/..%2f..%2fetc%2fpasswd`,
    `/gateway/${id}/request/%2E%2E%5C%2E%2E%5Cwin.ini`,
    `/gateway/../actors`,
    `/actors/../metadata`,
    `/actors/%2e%2e/metadata`,
    `/gateway/${id}/action/..`,
    `/gateway/${id}/action/%2e%2e%2fincrement`,
    `/gateway/${id}/./action/get`,
    `/gateway/${id}/request/%00`,
    `/gateway/${id}/request/%zz`,
    `//gateway//${id}//action//get`,
    `/gateway/${id}/inspector/../state`,
    `/..`,
    `/%2e%2e`,
  ];
  const out: Bad[] = [];
  const gens: Array<() => Bad> = [
    () => ({ method: "POST", path: `/gateway/${id}/action/increment`, headers: json, body: pick(badJson) }),
    () => ({ method: "POST", path: `/gateway/${id}/action/increment`, headers: json, body: JSON.stringify(pick(wrongArgs)) }),
    () => ({ method: pick(["PUT", "POST"]), path: `/actors`, headers: json, body: JSON.stringify(pick(wrongCreate)) }),
    () => ({ method: pick(["PUT", "POST"]), path: `/actors`, headers: json, body: pick(badJson) }),
    () => ({
      method: "POST",
      path: `/gateway/${id}/action/increment`,
      headers: json,
      body: JSON.stringify({ args: ["x".repeat(70_000 + Math.floor(rand() * 50_000))] }),
    }),
    () => ({ method: "PUT", path: `/actors`, headers: json, body: "{" + " ".repeat(200_000) + "}" }),
    () => ({ method: "GET", path: `/actors/${id}/kv/keys/${pick(["%%%", "abc", "a=b=", "====", "%2F%2F%2F", "@@", "YWJj%", "YW%20Jj", "-_-_", "YQ"])}` }),
    () => ({
      method: "POST",
      path: `/gateway/${id}/action/get`,
      headers: { ...json, "x-rivet-encoding": pick(["xml", "JSON", "bare2", "cbor ", "protobuf", "*", "json,cbor"]) },
      body: '{"args":[]}',
    }),
    () => ({ method: pick(["GET", "POST", "PUT"]), path: pick(traversal), headers: json, body: '{"args":[]}' }),
    () => ({ method: "POST", path: `/gateway/${pick(badIds)}/action/get`, headers: json, body: '{"args":[]}' }),
    () => ({ method: "GET", path: `/actors/${pick(badIds)}/kv/keys/YWJj` }),
    () => ({ method: "POST", path: `/gateway/${id}/action/get`, headers: { "x-rivet-encoding": "cbor" }, body: randomBytes(1 + Math.floor(rand() * 40)) }),
    () => ({ method: "POST", path: `/gateway/${id}/action/get`, headers: { "x-rivet-encoding": "bare" }, body: randomBytes(Math.floor(rand() * 40)) }),
    () => ({ method: "POST", path: `/gateway/${workerId}/queue/jobs`, headers: { "x-rivet-encoding": "bare" }, body: randomBytes(Math.floor(rand() * 30)) }),
    () => ({
      method: "POST",
      path: `/gateway/${workerId}/queue/jobs`,
      headers: json,
      body: JSON.stringify(pick([{ body: 1, wait: "x" }, { body: 1, timeout: "soon" }, { body: 1, timeout: -5 }, [], "q", { body: 1, name: 5 }])),
    }),
    () => ({
      method: "GET",
      path: pick([
        `/actors`,
        `/actors?key=x`,
        `/actors?actor_ids=a&name=b`,
        `/actors?actor_ids=${Array(40).fill("a").join(",")}`,
        `/actors?actor_ids=`,
        `/actors/names`,
        `/actors?name=&key=`,
      ]),
    }),
    () => ({
      method: "GET",
      path: `/gateway/${id}/inspector/${pick(["queue?limit=-1", "queue?limit=abc", "traces?startMs=x", "traces?limit=1e9", "nothing", "state/extra"])}`,
    }),
    () => ({ method: "PATCH", path: `/gateway/${id}/inspector/state`, headers: json, body: pick(['{"nostate":1}', "{", "[]", "7"]) }),
    () => ({
      method: "POST",
      path: `/gateway/${id}/action/get`,
      headers: { ...json, "x-rivet-conn-params": pick(["{", "undefined", "{'a':1}"]) },
      body: '{"args":[]}',
    }),
    () => ({
      method: pick(["DELETE", "PATCH", "TRACE"]),
      path: pick([`/metadata`, `/actors/names?namespace=default`, `/gateway/${id}/action/get`, `/gateway/${id}/health`]),
    }),
    () => ({ method: "GET", path: pick(["/", "/favicon.ico", "/api", "/gateway", "/gateway/", `/gateway/${id}`, `/gateway/${id}/`, "/actors/x/y/z"]) }),
    () => ({
      method: "GET",
      path: `/actors`,
      headers: { "x-rivet-target": pick(["actor", "runner", ""]), "x-rivet-actor": pick(["", "%zz", "nosuch", "../x"]) },
    }),
  ];
  for (let i = 0; i < count; i++) out.push(gens[i % gens.length]());
  return out;
}

function send(port: number, agent: http.Agent, bad: Bad): Promise<number> {
  return new Promise((resolve) => {
    const body = bad.body === undefined ? undefined : Buffer.isBuffer(bad.body) ? bad.body : Buffer.from(bad.body);
    const r = http.request(
      { host: "127.0.0.1", port, path: bad.path, method: bad.method, agent, headers: { ...bad.headers, ...(body ? { "content-length": body.length } : {}) } },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(-1));
      },
    );
    r.on("error", () => resolve(-1));
    r.end(body);
  });
}

let d: TestDaemon;
let id = "";
let workerId = "";
test.before(async () => {
  d = await startDaemon({ config: "gateway:\n  max_body_bytes: 65536\n" });
  id = (await putActor(d.url, { name: "counter", key: "victim" })).json.actor.actor_id as string;
  workerId = (await putActor(d.url, { name: "worker", key: "victim" })).json.actor.actor_id as string;
});
test.after(async () => {
  await d?.dispose();
});

test("1,200 malformed requests get only 4xx answers and the daemon stays up", async () => {
  const port = Number(new URL(d.url).port);
  const cases = generate(id, workerId, 1200);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const failures: string[] = [];
  const histogram: Record<number, number> = {};
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < cases.length) {
        const c = cases[next++];
        const status = await send(port, agent, c);
        histogram[status] = (histogram[status] ?? 0) + 1;
        if (status < 400 || status > 499) failures.push(`${c.method} ${c.path.slice(0, 120)} -> ${status} (${String(c.body ?? "").slice(0, 60)})`);
      }
    }),
  );
  agent.destroy();
  console.log(`statuses: ${JSON.stringify(histogram)}`);
  assert.equal(failures.slice(0, 20), [], `${failures.length} non-4xx answers`);
  // Still up and consistent.
  process.kill(d.pid, 0);
  const meta = await fetch(`${d.url}/metadata`);
  assert.is(meta.status, 200);
  const before = (await call(d.url, id, "get")).json.output;
  assert.equal((await call(d.url, id, "increment", [1])).json, { output: before + 1 });
});

test("in development without a configured token the inspector is open", async () => {
  assert.is((await fetch(`${d.url}/gateway/${id}/inspector/state`)).status, 200);
});

test.run();
