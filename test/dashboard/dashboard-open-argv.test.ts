// `agent dashboard` opens the browser without putting the sign-in code on a command line (where
// other local users read it in /proc/<pid>/cmdline): a fake xdg-open on PATH records its argv,
// which names a local 0600 page and holds no code; that page, opened in real Chromium, signs in.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli } from "../helpers/cli.js";
import { skip } from "../helpers/skip.js";
import { waitFor } from "../helpers/wait.js";
import { startDaemon, type TestDaemon } from "../gateway/daemon.js";

const CHROMIUM = "/usr/bin/chromium";
const ACTORS = "export const counter = { state: { n: 0 }, actions: { get: (c) => c.state.n } };\n";

let d: TestDaemon;
const bin = mkdtempSync(join(tmpdir(), "xdg-"));
const argvFile = join(bin, "argv.json");
test.before(async () => {
  d = await startDaemon({ actors: ACTORS });
  // The fake opener (xdg-open; `open` on macOS): records its arguments and exits.
  for (const name of ["xdg-open", "open"]) {
    writeFileSync(join(bin, name), `#!${process.execPath}\nrequire("fs").writeFileSync(${JSON.stringify(argvFile)}, JSON.stringify(process.argv.slice(2)));\n`);
    chmodSync(join(bin, name), 0o755);
  }
});
test.after(async () => {
  await d?.dispose();
  rmSync(bin, { recursive: true, force: true });
});

let opened = "";
let result: { sign_in_url: string; url: string; open_file: string };

test("the opener gets a local page, never the code; the page is the user's alone", async () => {
  const r = await runCli(["dashboard", "--json"], { home: d.home, env: { ...d.env, PATH: `${bin}:${process.env.PATH}` } });
  assert.is(r.code, 0, r.stderr);
  result = JSON.parse(r.stdout);
  const code = new URL(result.sign_in_url).searchParams.get("code")!;
  assert.ok(code.length > 20);
  const argv = JSON.parse(await waitFor("the opener to run", () => (existsSync(argvFile) ? readFileSync(argvFile, "utf8") : undefined))) as string[];
  assert.equal(argv, [result.open_file]);
  assert.not.ok(argv.join(" ").includes(code), "the code is not on the opener's command line");
  opened = argv[0]!;
  assert.is(statSync(opened).mode & 0o777, 0o600);
  assert.ok(readFileSync(opened, "utf8").includes(code), "the page carries the code");
});

test("in Chromium, the local page signs in: the dashboard's API answers with the session", async () => {
  if (!existsSync(CHROMIUM)) return skip(`${CHROMIUM} is not installed (Debian's chromium package)`);
  const { chromium } = await import("playwright-core");
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });
  try {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`file://${opened}`);
    await page.waitForURL(result.url, { timeout: 10_000 });
    const status = await page.evaluate(async () => (await fetch("/api/rpc/daemon.status", { method: "POST", body: "{}" })).status);
    assert.is(status, 200);
  } finally {
    await browser.close();
  }
});

test("a cross-site navigation elsewhere on the dashboard is still refused", async () => {
  const res = await fetch(result.url, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "navigate", "sec-fetch-dest": "document" } });
  assert.is(res.status, 403);
  const withCode = await fetch(`${result.url}?code=x`, { headers: { "sec-fetch-site": "cross-site", "sec-fetch-mode": "no-cors", "sec-fetch-dest": "image" } });
  assert.is(withCode.status, 403, "an <img> with a code is no navigation");
});

test.run();
