// An actor's onRequest page comes from the dashboard's origin (the gateway's host:port), so it is
// sandboxed: in real Chromium, signed in to the dashboard, the page's script cannot call the
// dashboard's API with the session (old code: 200), and an actor cannot set the session cookie.
// An actor that sends its own CSP sandbox keeps it as given.
import { existsSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli } from "../helpers/cli.js";
import { skip } from "../helpers/skip.js";
import { putActor, startDaemon, type TestDaemon } from "../gateway/daemon.js";

const CHROMIUM = "/usr/bin/chromium";

const ACTORS = `
const PAGE = '<!doctype html><title>loading</title><script>' +
  'let cookie = "readable"; try { document.cookie; } catch { cookie = "blocked"; }' +
  'fetch("/api/rpc/daemon.status", { method: "POST", credentials: "include", body: "{}" })' +
  '.then((r) => String(r.status), () => "refused").then((s) => { document.title = "rpc:" + s + " cookie:" + cookie; });' +
  '</script>';
export const counter = { state: { n: 0 }, actions: { get: (c) => c.state.n } };
export const site = {
  state: {},
  actions: {},
  onRequest: async (c, request) => {
    const path = new URL(request.url).pathname;
    // Not a sandbox directive to a browser (a no-break space is no CSP whitespace): the gateway's sandbox is added.
    if (path === "/nbsp") return new Response("x", { headers: { "content-security-policy": "sandbox\u00a0allow-scripts allow-same-origin" } });
    if (path === "/own") return new Response("own", { headers: { "content-security-policy": "sandbox allow-scripts allow-same-origin" } });
    if (path === "/cookie")
      return new Response("c", {
        headers: [
          ["set-cookie", "agent_dashboard_1=forged; Path=/"],
          // Nameless: a browser sends it as its bare value, "agent_dashboard_1=forged".
          ["set-cookie", "=agent_dashboard_1=forged; Path=/"],
          ["set-cookie", " = agent_dashboard_1=forged; Path=/"],
          ["set-cookie", "theme=dark; Path=/"],
        ],
      });
    return new Response(PAGE, { headers: { "content-type": "text/html; charset=utf-8", "content-security-policy": "img-src 'none'" } });
  },
};
`;

let d: TestDaemon;
let pageUrl = "";
let base = "";
test.before(async () => {
  d = await startDaemon({ actors: ACTORS });
  const created = await putActor(d.url, { name: "site", key: "k" });
  assert.is(created.status, 200, JSON.stringify(created.json));
  base = `${d.url}/gateway/${created.json.actor.actor_id}/request`;
  pageUrl = `${base}/page`;
});
test.after(async () => {
  await d?.dispose();
});

test("an actor's page is sandboxed, its own CSP kept beside; an actor's own sandbox is kept as given", async () => {
  const res = await fetch(pageUrl);
  assert.is(res.status, 200);
  const csp = res.headers.get("content-security-policy") ?? "";
  assert.match(csp, /img-src 'none'/);
  assert.match(csp, /(^|, )sandbox allow-scripts/);
  assert.not.match(csp, /allow-same-origin/);
  const own = await fetch(`${base}/own`);
  assert.is(own.headers.get("content-security-policy"), "sandbox allow-scripts allow-same-origin");
  const nbsp = await fetch(`${base}/nbsp`);
  assert.match(nbsp.headers.get("content-security-policy") ?? "", /, sandbox allow-scripts allow-forms/);
});

test("an actor cannot set the dashboard's session cookie", async () => {
  const res = await fetch(`${base}/cookie`);
  assert.equal(res.headers.getSetCookie(), ["theme=dark; Path=/"]);
});

test("in Chromium, signed in to the dashboard, an actor page's script cannot call the dashboard's API", async () => {
  if (!existsSync(CHROMIUM)) return skip(`${CHROMIUM} is not installed (Debian's chromium package)`);
  const r = await runCli(["dashboard", "--no-open", "--json"], { home: d.home, env: d.env });
  assert.is(r.code, 0, r.stderr);
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await (await browser.newContext()).newPage();
    await page.goto(JSON.parse(r.stdout).sign_in_url);
    // Signed in: the dashboard's own script may call the API with the cookie.
    const own = await page.evaluate(async () => (await fetch("/api/rpc/daemon.status", { method: "POST", body: "{}" })).status);
    assert.is(own, 200);
    await page.goto(pageUrl);
    await page.waitForFunction("document.title.startsWith('rpc:')");
    const title = await page.title();
    assert.not.match(title, /rpc:200/, title);
    assert.match(title, /cookie:blocked/, title);
  } finally {
    await browser.close();
  }
});

test.run();
