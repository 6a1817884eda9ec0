// The dashboard over plain HTTP on a real daemon with a gateway token and a listed CORS origin:
// the code signs in on loopback, the cookie stands for the token only on a same-origin request,
// `--port` serves the same app and API on a port of its own, the RPC door serves only its list,
// profile and cron changes made from the CLI reach the event stream.
// And the sign-in of a non-loopback bind (the routes behind a loopback test server that says
// "not loopback": tests bind 127.0.0.1 only) needs the token with the code.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import { join } from "node:path";
import type { AddressInfo } from "node:net";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { pageRoutes } from "../../daemon/dashboard/dashboard-routes.js";
import { EventStream } from "../../daemon/dashboard/event-stream.js";
import { DashboardSignIn } from "../../daemon/dashboard/sign-in-codes.js";
import { type KanbanHome, kanbanHome, TOKEN } from "../kanban/board-helpers.js";
import { waitFor } from "../helpers/wait.js";

const LISTED = "http://127.0.0.1:1";
let h: KanbanHome;

test.before(async () => {
  h = await kanbanHome();
  // A listed CORS origin (applied by a reload, as a user would).
  const file = join(h.home, "config.yaml");
  writeFileSync(file, `${existsSync(file) ? readFileSync(file, "utf8") : ""}\ngateway:\n  cors_origins: ["${LISTED}"]\n`);
  assert.is((await h.cli(["daemon", "reload"])).code, 0);
});
test.after(async () => {
  await h?.dispose();
});

async function signIn(url: string): Promise<string> {
  const res = await fetch(url, { redirect: "manual" });
  assert.is(res.status, 303);
  assert.is(res.headers.get("location"), "/dashboard/");
  const cookie = res.headers.get("set-cookie") ?? "";
  assert.match(cookie, /HttpOnly/);
  assert.match(cookie, /SameSite=Strict/);
  return cookie.split(";")[0]!;
}

test("with a gateway token on loopback, the code alone signs in; the cookie then reads the board", async () => {
  const open = await h.json(["dashboard", "--no-open"]);
  assert.is(open.token_required, false);
  const cookie = await signIn(open.sign_in_url);
  const base = new URL(open.url).origin;
  assert.is((await fetch(`${base}/api/plugins/kanban/board`)).status, 401, "no cookie, no token");
  const board = await fetch(`${base}/api/plugins/kanban/board`, { headers: { cookie } });
  assert.is(board.status, 200);
  const again = await fetch(open.sign_in_url, { redirect: "manual" });
  assert.is(again.status, 401, "a code works once");
});

test("the cookie counts only on a same-origin request: a foreign origin is 403, a listed one gets no trust (401)", async () => {
  const open = await h.json(["dashboard", "--no-open"]);
  const cookie = await signIn(open.sign_in_url);
  const base = new URL(open.url).origin;
  const foreign = await fetch(`${base}/api/plugins/kanban/board`, { headers: { cookie, origin: "http://127.0.0.1:9" } });
  assert.is(foreign.status, 403);
  const listed = await fetch(`${base}/api/plugins/kanban/board`, { headers: { cookie, origin: LISTED } });
  assert.is(listed.status, 401, "a listed origin must bring the token itself");
  const own = await fetch(`${base}/api/plugins/kanban/board`, { headers: { cookie, origin: base } });
  assert.is(own.status, 200);
  const sameSiteImg = await fetch(`${base}/api/events`, { headers: { cookie, "sec-fetch-site": "same-site" } });
  assert.is(sameSiteImg.status, 403);
});

test("the RPC door serves its list (with the token too) and nothing else", async () => {
  const base = (await h.json(["daemon", "status"])).gateway_url;
  const ok = await fetch(`${base}/api/rpc/sessions.list`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: "{}" });
  assert.is(ok.status, 200);
  assert.ok(Array.isArray(((await ok.json()) as { sessions: unknown }).sessions));
  const bad = await fetch(`${base}/api/rpc/daemon.stop`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: "{}" });
  assert.is(bad.status, 404);
  const invalid = await fetch(`${base}/api/rpc/sessions.search`, { method: "POST", headers: { authorization: `Bearer ${TOKEN}` }, body: "{}" });
  assert.is(invalid.status, 400);
});

/** The `topic` events of the dashboard's stream, collected as they come, until `close`. */
async function topics(base: string, cookie: string) {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/events`, { headers: { cookie }, signal: controller.signal });
  assert.is(res.status, 200);
  const seen: Array<{ topic: string }> = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  let hello!: () => void;
  const greeted = new Promise<void>((resolve) => (hello = resolve));
  const reading = (async () => {
    for (;;) {
      const { done, value } = await reader.read().catch(() => ({ done: true, value: undefined }));
      if (done) return;
      buffer += value;
      let end = buffer.indexOf("\n\n");
      while (end >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const type = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (type === "hello") hello();
        if (type === "topic" && data) seen.push(JSON.parse(data));
        end = buffer.indexOf("\n\n");
      }
    }
  })();
  await greeted;
  return {
    seen,
    close: async () => {
      controller.abort();
      await reading;
    },
  };
}

test("profile and cron changes made from the CLI reach the event stream, sent by their features", async () => {
  const open = await h.json(["dashboard", "--no-open"]);
  const cookie = await signIn(open.sign_in_url);
  const stream = await topics(new URL(open.url).origin, cookie);
  try {
    const has = (topic: string) => stream.seen.some((e) => e.topic === topic);
    assert.is((await h.cli(["profile", "create", "streamed", "--no-alias"])).code, 0);
    await waitFor("profiles.changed after profile create", () => has("profiles.changed"), 3000);
    const job = (await h.json(["cron", "add", "every 3h", "--name", "streamed-job", "--prompt", "check"])).job;
    await waitFor("cron.changed after cron add", () => has("cron.changed"), 3000);
    stream.seen.length = 0;
    assert.is((await h.cli(["cron", "pause", job.id])).code, 0);
    await waitFor("cron.changed after cron pause", () => has("cron.changed"), 3000);
    stream.seen.length = 0;
    assert.is((await h.cli(["profile", "describe", "streamed", "--text", "Streams"])).code, 0);
    await waitFor("profiles.changed after profile describe", () => has("profiles.changed"), 3000);
    stream.seen.length = 0;
    assert.is((await h.cli(["cron", "remove", job.id])).code, 0);
    await waitFor("cron.changed after cron remove", () => has("cron.changed"), 3000);
  } finally {
    await stream.close();
  }
});

test("--port serves the same app and API on a port of its own", async () => {
  const open = await h.json(["dashboard", "--no-open", "--port", "0"]);
  const main = (await h.json(["daemon", "status"])).gateway_url;
  assert.is.not(new URL(open.url).port, new URL(main).port);
  const cookie = await signIn(open.sign_in_url);
  const base = new URL(open.url).origin;
  const page = await fetch(`${base}/dashboard/`, { headers: { cookie } });
  assert.is(page.status, 200);
  assert.match(page.headers.get("content-security-policy") ?? "", /default-src 'self'/);
  assert.is((await fetch(`${base}/api/plugins/kanban/board`, { headers: { cookie } })).status, 200);
});

test("on a non-loopback bind the code alone does not sign in: the form asks for the token", async () => {
  const signInCodes = new DashboardSignIn(null);
  const handler = pageRoutes({
    signIn: signInCodes,
    events: new EventStream({ onKanban: () => () => undefined, onBroadcast: () => () => undefined, logsDir: "/nonexistent", startedAt: 0 }),
    logsDir: "/nonexistent",
    invoke: async () => ({}),
  });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? "/", "http://x");
    const listener = { loopback: false, tokenRequired: true, tokenMatches: (t: string) => t === "right" };
    handler(req, res, { method: req.method ?? "GET", path: url.pathname, search: url.search, cors: null, trusted: false, listener }).catch((e) => {
      res.writeHead(500);
      res.end(String(e));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const { code } = signInCodes.mintCode();
    const form = await fetch(`${base}/dashboard/?code=${code}`, { redirect: "manual" });
    assert.is(form.status, 200);
    assert.not.ok(form.headers.get("set-cookie"), "no session from the code alone");
    assert.match(await form.text(), /name="token"/);
    const post = (token: string) =>
      fetch(`${base}/dashboard/sign-in`, {
        method: "POST",
        redirect: "manual",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ code, token }).toString(),
      });
    assert.is((await post("wrong")).status, 401);
    const right = await post("right");
    assert.is(right.status, 303);
    assert.match(right.headers.get("set-cookie") ?? "", /HttpOnly/);
  } finally {
    server.close();
  }
});

test("agent dashboard --help describes it; a bad --port is a usage error", async () => {
  const help = await h.cli(["dashboard", "--help"]);
  assert.is(help.code, 0);
  assert.match(help.stdout, /--no-open/);
  const bad = await h.cli(["dashboard", "--port", "70000", "--no-open"]);
  assert.is(bad.code, 2);
});

test.run();
