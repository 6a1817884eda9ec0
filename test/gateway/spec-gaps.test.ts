// What the spec requires of the gateway beyond the happy paths: required create fields, the
// forwarded root path, and a 413 the client can read while it is still sending.
import http from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { putActor, startDaemon, type TestDaemon } from "./daemon.js";

const MAX = 65536;
let d: TestDaemon;
let counterId = "";

test.before(async () => {
  d = await startDaemon({ config: `gateway:\n  max_body_bytes: ${MAX}\n` });
  counterId = (await putActor(d.url, { name: "counter", key: "gaps" })).json.actor.actor_id;
});
test.after(async () => {
  await d?.dispose();
});

async function create(method: "PUT" | "POST", body: Record<string, unknown>) {
  const r = await fetch(`${d.url}/actors`, { method, headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  return { status: r.status, json: (await r.json()) as any };
}

for (const method of ["PUT", "POST"] as const) {
  test(`${method} /actors without runner_name_selector is 400 api.bad_request and creates nothing`, async () => {
    const r = await create(method, { name: "counter", key: `no-runner-${method}`, crash_policy: "sleep" });
    assert.is(r.status, 400);
    assert.is(`${r.json.group}.${r.json.code}`, "api.bad_request");
    assert.match(r.json.message, /runner_name_selector/);
    const list = (await (await fetch(`${d.url}/actors?name=counter&key=no-runner-${method}`)).json()) as any;
    assert.equal(list.actors, []);
  });

  test(`${method} /actors without crash_policy is 400 api.bad_request`, async () => {
    const r = await create(method, { name: "counter", key: `no-policy-${method}`, runner_name_selector: "default" });
    assert.is(r.status, 400);
    assert.is(`${r.json.group}.${r.json.code}`, "api.bad_request");
    assert.match(r.json.message, /crash_policy/);
  });
}

test("/gateway/{id}/request with no path reaches the actor's handler as /", async () => {
  for (const path of [`/gateway/${counterId}/request`, `/gateway/${counterId}/request?q=1`]) {
    const r = await fetch(`${d.url}${path}`);
    assert.is(r.status, 201, path);
    const seen = (await r.json()) as any;
    assert.is(new URL(seen.url).pathname, "/", path);
  }
});

test("an action's args must be an array: any other value is 400 request.invalid, never run (a difference from RivetKit, docs/actor-gateway.md)", async () => {
  const action = (body: unknown) =>
    fetch(`${d.url}/gateway/${counterId}/action/increment`, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body) });
  const before = (await (await action({ args: [0] })).json()) as any;
  for (const args of [5, "12", { n: 1 }, null, true]) {
    const r = await action({ args });
    assert.is(r.status, 400, JSON.stringify(args));
    const e = (await r.json()) as any;
    assert.is(`${e.group}.${e.code}`, "request.invalid", JSON.stringify(e));
    assert.match(e.message, /args must be an array/);
  }
  const after = (await (await action({ args: [0] })).json()) as any;
  assert.equal(after, before, "no call ran");
});

/**
 * POST `size` bytes with node:http, written in 64 KiB chunks as fast as the socket takes them,
 * and report the response and any error the client saw (EPIPE, a reset) until the socket closed.
 */
function bigPost(path: string, size: number, chunked: boolean): Promise<{ status?: number; body: string; error?: Error }> {
  const u = new URL(path, d.url);
  return new Promise((resolve) => {
    let status: number | undefined;
    let body = "";
    let error: Error | undefined;
    const headers: http.OutgoingHttpHeaders = { "content-type": "application/json" };
    if (chunked) headers["transfer-encoding"] = "chunked";
    else headers["content-length"] = size;
    const req = http.request({ host: u.hostname, port: u.port, path: u.pathname, method: "POST", headers, agent: false });
    req.on("error", (e) => (error ??= e));
    req.on("response", (res) => {
      status = res.statusCode;
      res.setEncoding("utf8");
      res.on("data", (s) => (body += s));
      res.on("error", (e) => (error ??= e));
    });
    req.on("close", () => resolve({ status, body, error }));
    const chunk = Buffer.alloc(65536, 0x20);
    let sent = 0;
    const pump = () => {
      while (sent < size) {
        const part = chunk.subarray(0, Math.min(chunk.length, size - sent));
        sent += part.length;
        if (!req.write(part)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

for (const chunked of [false, true]) {
  test(`a client sending 32 MiB ${chunked ? "chunked" : "with a Content-Length"} reads its 413 and sees no reset or EPIPE`, async () => {
    const r = await bigPost(`/gateway/${counterId}/action/echo`, 32 * 1024 * 1024, chunked);
    assert.is(r.error, undefined, `client error: ${r.error?.message}`);
    assert.is(r.status, 413);
    assert.is(JSON.parse(r.body).code, "body_too_large");
    // The daemon keeps answering.
    assert.is((await fetch(`${d.url}/gateway/${counterId}/health`)).status, 200);
  });
}

test.run();
