/**
 * computer_use through the product: `agent computer-use status|install`, and a `chat -q` turn in
 * which the fake model drives the GTK test app on the daemon's private Xvfb (capture, click,
 * type, Return, more captures, ax), with only the 3 newest screenshots sent back.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { runCli, tempHome, waitFor } from "../helpers/cli.js";
import { skip } from "../helpers/skip.js";
import { cuaMissing, TEST_APP } from "./computer-use-helpers.js";

const missing = cuaMissing();

/** A PATH of its own: the given commands (found on the real PATH), plus extra scripts. */
function pathWith(commands: string[], scripts: Record<string, string> = {}): { dir: string; cleanup: () => void } {
  const dir = mkdtempSync(join(tmpdir(), "cua-path-"));
  for (const c of commands) {
    for (const d of (process.env.PATH ?? "").split(":")) {
      if (d && existsSync(join(d, c))) {
        symlinkSync(join(d, c), join(dir, c));
        break;
      }
    }
  }
  for (const [name, body] of Object.entries(scripts)) writeFileSync(join(dir, name), body, { mode: 0o755 });
  return { dir, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

function gone(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
  } catch {
    return true;
  }
}

test("status says what is missing when Xvfb is absent; install runs apt (root) or prints the command, and records the version", async () => {
  if (!existsSync("/usr/bin/python3")) return skip("computer_use status: no /usr/bin/python3");
  const { home, cleanup } = tempHome("cua");
  const log = join(home, "apt-calls.txt");
  const bin = pathWith(["xdotool", "dbus-daemon", "dpkg-query"], { "apt-get": `#!/bin/sh\necho "$@" >> ${log}\nexit 0\n` });
  const env = { PATH: bin.dir };
  try {
    const r = await runCli(["computer-use", "status", "--json"], { home, env });
    assert.is(r.code, 0, r.stderr);
    const status = JSON.parse(r.stdout);
    assert.is(status.enabled, false);
    assert.is(status.display, "private");
    assert.is(status.running, null);
    assert.ok(status.missing.includes("Xvfb (package xvfb)"), status.missing.join("; "));
    assert.is(status.driver.installed, null);
    const list = await runCli(["tools", "list"], { home, env });
    assert.match(list.stdout, /computer_use\s+computer_use\s+no: needs computer_use.enabled: true/);
    const text = await runCli(["computer-use", "status", "--check"], { home, env });
    assert.match(text.stdout, /missing: Xvfb \(package xvfb\)/);
    assert.match(text.stdout, /accessibility: unreachable: the driver is incomplete/);

    const install = await runCli(["computer-use", "install", "--json"], { home, env });
    assert.is(install.code, 0, install.stderr);
    const done = JSON.parse(install.stdout);
    if (process.getuid?.() === 0) {
      assert.is(done.outcome, "ran");
      assert.match(readFileSync(log, "utf8"), /^install -y --no-install-recommends --no-upgrade xvfb xdotool at-spi2-core python3-pyatspi/m);
      const upgrade = JSON.parse((await runCli(["computer-use", "install", "--upgrade", "--json"], { home, env })).stdout);
      assert.match(upgrade.command, /^apt-get update && apt-get install -y --no-install-recommends xvfb/);
      assert.match(readFileSync(log, "utf8"), /^update$/m);
    } else {
      assert.is(done.outcome, "command");
      assert.match(done.command, /^sudo apt-get install -y --no-install-recommends --no-upgrade xvfb xdotool/);
    }
    const after = JSON.parse((await runCli(["computer-use", "status", "--json"], { home, env })).stdout);
    if (Object.values(after.driver.packages).every((v) => v !== null)) assert.is(after.driver.installed, done.version);
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    bin.cleanup();
    cleanup();
  }
});

test("AGENT_CUA_DRIVER_VERSION pins the driver: another version is refused by install and named by status", async () => {
  const { home, cleanup } = tempHome("cua");
  const env = { AGENT_CUA_DRIVER_VERSION: "0.0.1" };
  try {
    const install = await runCli(["computer-use", "install"], { home, env });
    assert.is.not(install.code, 0);
    assert.match(install.stderr, /AGENT_CUA_DRIVER_VERSION pins driver 0\.0\.1, but this agent ships driver \d/);
    const status = JSON.parse((await runCli(["computer-use", "status", "--json"], { home, env })).stdout);
    assert.is(status.driver.pinned, "0.0.1");
    assert.ok(status.missing.some((m: string) => m.includes("pinned by AGENT_CUA_DRIVER_VERSION")));
  } finally {
    await runCli(["daemon", "stop"], { home }).catch(() => undefined);
    cleanup();
  }
});

test("chat -q: the fake model drives the test app on the daemon's private Xvfb; 3 screenshots kept; the display stops with the daemon", async () => {
  if (missing) return skip(`computer_use CLI turn: ${missing}`);
  const call = (args: Record<string, unknown>) => ({ toolCalls: [{ name: "computer_use", arguments: args }] });
  const h = await chatHome(
    {
      script: [
        call({ action: "capture", mode: "som" }),
        call({ action: "click", element: 1 }),
        call({ action: "click", element: 2 }),
        call({ action: "type", text: "hi from the model" }),
        call({ action: "key", keys: "Return" }),
        call({ action: "capture", mode: "som" }),
        call({ action: "capture", mode: "vision" }),
        call({ action: "capture", mode: "som" }),
        call({ action: "capture", mode: "ax" }),
        { text: "The form is submitted." },
      ],
    },
    "computer_use:\n  enabled: true\n",
  );
  let app: ReturnType<typeof spawn> | null = null;
  let xvfb = 0;
  try {
    const tools = await h.cli(["tools", "list", "--json"]);
    assert.ok(
      JSON.parse(tools.stdout).tools.some((t: { name: string; available: boolean }) => t.name === "computer_use" && t.available),
      tools.stdout,
    );
    const s = await h.cli(["computer-use", "status", "--check", "--json"]);
    assert.is(s.code, 0, s.stderr);
    const status = JSON.parse(s.stdout);
    assert.ok(status.running?.private, s.stdout);
    assert.match(status.running.display, /^:\d+$/);
    assert.match(status.running.xauthority, /agent-xauth-[^/]+\/Xauthority$/);
    assert.is(status.accessibility.reachable, true, s.stdout);
    xvfb = status.running.pids[0];
    // The app on the daemon's display, with its session bus (docs/computer-use.md "Starting apps on the private display").
    const lines: string[] = [];
    app = spawn("/usr/bin/python3", [TEST_APP, "--title", "CLI App"], {
      env: {
        ...process.env,
        DISPLAY: status.running.display,
        XAUTHORITY: status.running.xauthority,
        DBUS_SESSION_BUS_ADDRESS: status.running.bus,
        GTK_OVERLAY_SCROLLING: "0",
      },
      stdio: ["ignore", "pipe", "inherit"],
    });
    app.stdout!.on("data", (d: Buffer) => lines.push(...String(d).split("\n").filter(Boolean)));
    await waitFor("the app is ready", () => lines.some((l) => l.startsWith("ready")));
    await waitFor("the app in the accessibility tree", async () => {
      const r = JSON.parse((await h.cli(["computer-use", "status", "--check", "--json"])).stdout);
      return r.accessibility.apps >= 1;
    });

    const r = await h.chat(["-q", "fill in the form"], { timeoutMs: 90_000 });
    assert.is(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /The form is submitted\./);
    await waitFor(
      () => `the app's events (${lines.join(" | ")})`,
      () => lines.includes("clicked 1") && lines.includes("submitted hi from the model"),
    );
    const first = toolMessages(h.fake, 1)[0]!.content;
    assert.match(first, /\[1\] push button "Press me"/);
    // Request 9 follows the fourth screenshot: three images go to the model, the oldest is its summary.
    const ninth = h.fake.requests[9]!.body.messages as Array<{ role: string; content: unknown }>;
    const images = ninth.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string }>).filter((p) => p.type === "image_url") : []));
    assert.is(images.length, 3);
    assert.match(toolMessages(h.fake, 9)[0]!.content, /older image\(s\) omitted/);
    const ax = toolMessages(h.fake, 9).at(-1)!.content;
    assert.match(ax, /label "submitted: hi from the model"/);
    assert.match(ax, /label "clicks: 1"/);
    const logFile = join(h.home, "logs", "computer-use.log");
    const logged = existsSync(logFile) ? readFileSync(logFile, "utf8") : "";
    assert.match(logged, /click element 1 \(push button \\?"Press me\\?"\)/);
    assert.match(logged, /type 17 character\(s\)/);
    assert.not.match(logged, /hi from the model/);
  } finally {
    app?.kill("SIGKILL");
    await h.dispose();
  }
  if (xvfb) await waitFor("the private Xvfb stops with the daemon", () => gone(xvfb));
});

mkdirSync(tmpdir(), { recursive: true });
test.run();
