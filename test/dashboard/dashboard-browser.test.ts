// The web dashboard in real headless Chromium (Debian's /usr/bin/chromium, driven by
// playwright-core) against a real daemon: sign-in, the live board, drag and its refusals, the
// task detail, the orchestration settings, session search, the logs following, profiles, cron
// and sessions changed from the CLI showing live, and a page from
// another loopback port that can neither read nor change anything. One browser, one daemon.
// Screenshots at 1280 and 390 px (light and dark) go to test-artifacts/dashboard/.
import { existsSync, mkdirSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, waitFor } from "../agent/helpers.js";
import { ROOT } from "../helpers/cli.js";
import { skip } from "../helpers/skip.js";

const CHROMIUM = "/usr/bin/chromium";
const ARTIFACTS = join(ROOT, "test-artifacts", "dashboard");
const missing = existsSync(CHROMIUM) ? null : `${CHROMIUM} is not installed (Debian's chromium package)`;

type Home = Awaited<ReturnType<typeof chatHome>>;
let h: Home;
// playwright-core's types, loaded lazily with the module.
let browser: import("playwright-core").Browser;
let context: import("playwright-core").BrowserContext;
let page: import("playwright-core").Page;
let base = "";
const pageErrors: string[] = [];
let signInUrl = "";

async function json(args: string[]): Promise<any> {
  const r = await h.cli([...args, "--json"]);
  assert.is(r.code, 0, `agent ${args.join(" ")}: ${r.stderr}${r.stdout}`);
  return JSON.parse(r.stdout);
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

async function shot(name: string): Promise<void> {
  mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: false });
}

test.before(async () => {
  if (missing) return;
  // No dispatching (a ready task stays ready) and no automatic decomposition: the board moves only when the test moves it.
  h = await chatHome(
    { script: [{ text: "Pelicans fly low over the water at dawn." }, { text: "Herons stand still in the shallows." }] },
    "kanban:\n  max_in_progress: 0\n  auto_decompose: false\n",
  );
  // A fixed port, so the page finds the daemon again after a restart.
  h.env.AGENT_GATEWAY_PORT = String(await freePort());
  const chat = await h.chat(["-q", "Tell me about pelicans"]);
  assert.is(chat.code, 0, chat.stderr);
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  const open = await json(["dashboard", "--no-open"]);
  signInUrl = open.sign_in_url;
  base = new URL(open.url).origin;
  const { chromium } = await import("playwright-core");
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  page = await context.newPage();
  page.on("pageerror", (error) => pageErrors.push(String(error)));
});

test.after(async () => {
  await browser?.close();
  await h?.dispose();
});

test("signing in with the code sets the cookie, leaves the address bar; the code is refused the second time", async () => {
  if (missing) return skip(missing);
  await page.goto(signInUrl);
  await page.getByRole("heading", { name: /Board/ }).waitFor();
  assert.is(page.url(), `${base}/dashboard/`, "the code is gone from the address bar");
  const cookies = await context.cookies(base);
  const session = cookies.find((c) => c.name.startsWith("agent_dashboard_"));
  assert.ok(session, "a session cookie");
  assert.ok(session!.httpOnly, "HttpOnly");
  assert.is(session!.sameSite, "Strict");
  assert.is(await page.evaluate("document.cookie"), "", "the page's script cannot read it");
  await page.getByTestId("live").getByText("live").waitFor();

  const other = await browser.newContext();
  const again = await other.newPage();
  const res = await again.goto(signInUrl);
  assert.is(res?.status(), 401);
  assert.match((await again.textContent("body")) ?? "", /no longer works/);
  assert.is((await other.cookies(base)).length, 0, "no cookie for a spent code");
  await other.close();
});

let readyId = "";

test("a task created from the CLI appears on the board within a second", async () => {
  if (missing) return skip(missing);
  const created = await json(["kanban", "create", "Written from the CLI", "--body", "The body of the task."]);
  const returned = Date.now();
  readyId = created.task.id;
  await page.locator(`[data-status="ready"] [data-task="${readyId}"]`).waitFor({ timeout: 5000 });
  const ms = Date.now() - returned;
  assert.ok(ms < 1000, `appeared ${ms} ms after the CLI returned`);
});

test("dragging a ready task to done is refused with the board's reason and snaps back; to blocked it moves", async () => {
  if (missing) return skip(missing);
  await page.dragAndDrop(`[data-task="${readyId}"]`, `[data-status="done"]`);
  await page
    .getByTestId("board-notice")
    .getByText(/summary/)
    .waitFor();
  await page.locator(`[data-status="ready"] [data-task="${readyId}"]`).waitFor();
  assert.is((await json(["kanban", "show", readyId])).task.status, "ready");
  await shot("board-refused-1280");

  await page.dragAndDrop(`[data-task="${readyId}"]`, `[data-status="blocked"]`);
  await page.locator(`[data-status="blocked"] [data-task="${readyId}"]`).waitFor();
  await waitFor("the task is blocked", async () => (await json(["kanban", "show", readyId])).task.status === "blocked");
});

test("the task detail shows the body, comments and events, and updates live", async () => {
  if (missing) return skip(missing);
  await page.locator(`[data-task="${readyId}"]`).click();
  const detail = page.getByTestId("task-detail");
  await detail.waitFor();
  assert.match((await detail.getByTestId("detail-body").textContent()) ?? "", /The body of the task\./);
  assert.match((await detail.getByTestId("detail-status").textContent()) ?? "", /blocked/);
  assert.match((await detail.getByTestId("detail-events").textContent()) ?? "", /created/);
  assert.is((await h.cli(["kanban", "comment", readyId, "A comment from the CLI"])).code, 0);
  await detail.getByTestId("detail-comments").getByText("A comment from the CLI").waitFor({ timeout: 3000 });
  // From the page: a comment, then unblock.
  await detail.getByLabel("Comment or reason").fill("A comment from the page");
  await detail.getByRole("button", { name: "Comment", exact: true }).click();
  await detail.getByTestId("detail-comments").getByText("A comment from the page").waitFor();
  await detail.getByRole("button", { name: "Unblock" }).click();
  await detail.getByTestId("detail-status").getByText("ready").waitFor();
  await shot("detail-1280");
  await page.keyboard.press("Escape");
  await detail.waitFor({ state: "detached" });
});

test("the orchestration settings are saved and echoed with what they resolve to", async () => {
  if (missing) return skip(missing);
  await page.getByText("Orchestration settings").click();
  const form = page.getByRole("form", { name: "Orchestration settings" });
  await form.getByLabel("Default assignee").selectOption("writer");
  await form.getByRole("button", { name: "Save settings" }).click();
  await page.getByTestId("orchestration-status").getByText("Saved.").waitFor();
  assert.match((await page.getByTestId("resolved-default_assignee").textContent()) ?? "", /writer/);
  const config = await h.cli(["config", "get", "kanban.default_assignee"]);
  assert.match(config.stdout, /writer/);
});

test("a session search finds the transcript; tool calls are collapsed", async () => {
  if (missing) return skip(missing);
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByLabel("Search transcripts").fill("pelicans");
  await page.getByRole("button", { name: "Search" }).click();
  const results = page.getByTestId("search-results");
  await results.waitFor();
  await results.getByRole("button").first().click();
  await page
    .getByTestId("transcript")
    .getByText(/Pelicans fly low/)
    .waitFor();
  await shot("sessions-1280");
});

test("the logs view follows a component's log live", async () => {
  if (missing) return skip(missing);
  await page.getByRole("link", { name: "Logs" }).click();
  await page.getByLabel("Component").selectOption("dashboard");
  const box = page.getByTestId("logbox");
  await box.getByText("dashboard sign-in code minted").first().waitFor();
  const before = await box.getByText("dashboard sign-in code minted").count();
  await json(["dashboard", "--no-open"]);
  await waitFor("a new log line", async () => (await box.getByText("dashboard sign-in code minted").count()) > before, 5000);
  await shot("logs-1280");
});

test("a page on another loopback port can neither read nor change anything", async () => {
  if (missing) return skip(missing);
  const before = (await json(["kanban", "list"])).tasks.length;
  const evil = `<!doctype html><script>
    const base = ${JSON.stringify(base)};
    const out = {};
    (async () => {
      try { const r = await fetch(base + "/api/plugins/kanban/board", { credentials: "include" }); out.read = r.status + " " + (await r.text()).slice(0, 80); } catch (e) { out.read = "error " + e.name; }
      try { await fetch(base + "/api/plugins/kanban/tasks", { method: "POST", mode: "no-cors", credentials: "include", headers: { "content-type": "text/plain" }, body: JSON.stringify({ title: "evil" }) }); out.write = "sent"; } catch (e) { out.write = "error " + e.name; }
      try { await fetch(base + "/api/rpc/kanban.archive", { method: "POST", mode: "no-cors", credentials: "include", body: "{}" }); } catch {}
      out.events = await new Promise((resolve) => { const s = new EventSource(base + "/api/events", { withCredentials: true }); s.onopen = () => { s.close(); resolve("open"); }; s.onerror = () => { s.close(); resolve("refused"); }; });
      document.title = "done";
      document.body.dataset.out = JSON.stringify(out);
    })();
  </script>`;
  const server: Server = createServer((_req, res) => {
    res.writeHead(200, { "content-type": "text/html" });
    res.end(evil);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const evilPage = await context.newPage();
    await evilPage.goto(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    await evilPage.waitForFunction("document.title === 'done'");
    const out = JSON.parse((await evilPage.getAttribute("body", "data-out"))!);
    assert.match(out.read, /^error/, `the board could not be read: ${out.read}`);
    assert.is(out.events, "refused");
    await evilPage.close();
  } finally {
    server.close();
  }
  assert.is((await json(["kanban", "list"])).tasks.length, before, "nothing was created");
  assert.not.ok((await json(["kanban", "list"])).tasks.some((t: { title: string }) => t.title === "evil"));
});

test("the page reconnects after a daemon restart, still signed in, and stays live", async () => {
  if (missing) return skip(missing);
  await page.getByRole("link", { name: "Board" }).click();
  await page.getByTestId("live").getByText("live").waitFor();
  assert.is((await h.cli(["daemon", "stop"])).code, 0);
  await page.getByTestId("live").getByText("reconnecting").waitFor({ timeout: 10_000 });
  assert.is((await h.cli(["daemon", "start"])).code, 0);
  await page.getByTestId("live").getByText("live").waitFor({ timeout: 15_000 });
  const id = (await json(["kanban", "create", "After the restart"])).task.id;
  await page.locator(`[data-task="${id}"]`).waitFor({ timeout: 3000 });
});

/** Milliseconds from `since` until `check` holds in the page (polled each animation frame in the page). */
async function shownWithin(since: number, what: string, check: string, arg: unknown): Promise<number> {
  await page.waitForFunction(check, arg, { timeout: 5000 }).catch(() => assert.unreachable(`${what}: not shown within 5 s`));
  return Date.now() - since;
}

test("changes made from the CLI show live: a profile's description, a cron job paused, a new session", async () => {
  if (missing) return skip(missing);
  // Profiles: the profiles feature broadcasts the change; the view re-reads (no focus, no revisit).
  await page.getByRole("link", { name: "Profiles" }).click();
  await page.getByRole("heading", { name: "writer" }).waitFor();
  assert.is((await h.cli(["profile", "describe", "writer", "--text", "Writes the weekly letter"])).code, 0);
  const described = await shownWithin(
    Date.now(),
    "the description",
    "(text) => document.getElementById('desc-writer')?.value === text",
    "Writes the weekly letter",
  );
  assert.ok(described < 1000, `the description showed ${described} ms after the CLI returned`);

  // Cron: a job added, then paused from the CLI.
  await page.getByRole("link", { name: "Cron" }).click();
  await page.getByRole("heading", { name: /Cron/ }).waitFor();
  const job = (await json(["cron", "add", "every 2h", "--name", "pause-me", "--prompt", "check"])).job;
  await page.getByRole("button", { name: "pause-me" }).waitFor({ timeout: 3000 });
  assert.is((await h.cli(["cron", "pause", job.id])).code, 0);
  const paused = await shownWithin(
    Date.now(),
    "the job paused",
    "(name) => [...document.querySelectorAll('tbody tr')].some((tr) => tr.textContent.includes(name) && tr.textContent.includes('(paused)'))",
    "pause-me",
  );
  assert.ok(paused < 1000, `the pause showed ${paused} ms after the CLI returned`);

  // Sessions: a session made by `agent chat -q` joins the recent list.
  await page.getByRole("link", { name: "Sessions" }).click();
  await page.getByRole("heading", { name: "Recent" }).waitFor();
  const recent = page.locator("section ul.list > li");
  await recent.first().waitFor(); // the session made before the page opened
  const before = await recent.count();
  const chat = await h.chat(["-q", "Tell me about herons", "--json"]);
  assert.is(chat.code, 0, chat.stderr);
  const listed = await shownWithin(Date.now(), "the new session", "(n) => document.querySelectorAll('section ul.list > li').length === n", before + 1);
  assert.ok(listed < 1000, `the session showed ${listed} ms after \`agent chat -q\` returned`);
  const sessionId = JSON.parse(chat.stdout).session_id as string;
  const session = (await json(["sessions", "list"])).sessions.find((x: { id: string }) => x.id === sessionId);
  assert.ok(session, `the CLI lists the new session ${sessionId}`);
  await page.getByRole("button", { name: session.title || sessionId, exact: true }).waitFor();
  assert.is(await recent.count(), before + 1);
});

test("the profiles, cron and actors views render (a cron job added from the CLI shows live)", async () => {
  if (missing) return skip(missing);
  await page.getByRole("link", { name: "Profiles" }).click();
  await page.getByRole("heading", { name: "writer" }).waitFor();
  await page.getByRole("link", { name: "Cron" }).click();
  await page.getByRole("heading", { name: /Cron/ }).waitFor();
  assert.is((await h.cli(["cron", "add", "every 1h", "--name", "hourly-check", "--prompt", "check"])).code, 0);
  await page.getByRole("button", { name: "hourly-check" }).waitFor({ timeout: 3000 });
  await page.getByRole("link", { name: "Actors" }).click();
  await page.getByRole("heading", { name: "Actors" }).waitFor();
  // The inspector, through the gateway's own inspector routes.
  await page.getByRole("button", { name: "board", exact: true }).click();
  await page
    .getByRole("tabpanel")
    .getByText(/isStateEnabled/)
    .waitFor();
  await page.getByRole("tab", { name: "connections" }).click();
  await page
    .getByRole("tabpanel")
    .getByText(/"connections"/)
    .waitFor();
  await shot("cron-actors-1280");
  assert.equal(pageErrors, [], "no script errors in the page");
});

test("screenshots at 1280 and 390 px, light and dark", async () => {
  if (missing) return skip(missing);
  await page.getByRole("link", { name: "Board" }).click();
  await page.getByRole("heading", { name: /Board/ }).waitFor();
  await shot("board-1280-light");
  await page.emulateMedia({ colorScheme: "dark" });
  await shot("board-1280-dark");
  await page.setViewportSize({ width: 390, height: 844 });
  await shot("board-390-dark");
  await page.emulateMedia({ colorScheme: "light" });
  await shot("board-390-light");
  await page.getByRole("link", { name: "Logs" }).click();
  await shot("logs-390-light");
  // Keyboard: the views are reachable by Tab and the focus is visible.
  await page.keyboard.press("Tab");
  assert.ok(await page.evaluate("document.activeElement !== document.body"), "Tab moves the focus into the page");
});

test.run();
