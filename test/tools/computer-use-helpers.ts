/**
 * The computer_use tests' desktop: the driver's own private Xvfb (with its session bus and
 * accessibility bus), the tool bound to it, and the GTK test app (test/fixtures/cua-test-app.py)
 * started on that display. Everything is skipped, with the reason, where the driver's packages
 * are missing.
 */
import { type ChildProcessWithoutNullStreams, spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { CONFIG_DEFAULTS } from "../../shared/config/defaults.js";
import { computerUseTool } from "../../daemon/computer-use/computer-use-tool.js";
import { DesktopDriver } from "../../daemon/computer-use/desktop-driver.js";
import { atSpiLauncher } from "../../daemon/computer-use/private-display.js";
import type { ToolContext } from "../../daemon/tools/types.js";
import { ROOT } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

export const TEST_APP = join(ROOT, "test", "fixtures", "cua-test-app.py");

/** Null when the driver can run here; otherwise what is missing. */
export function cuaMissing(): string | null {
  for (const [cmd, args] of [
    ["Xvfb", ["-help"]],
    ["xdotool", ["version"]],
    ["dbus-daemon", ["--version"]],
  ] as const) {
    const r = spawnSync(cmd, args, { stdio: "ignore" });
    if (r.error) return `${cmd} is not installed (agent computer-use install)`;
  }
  if (!atSpiLauncher()) return "at-spi-bus-launcher is not installed (package at-spi2-core)";
  if (!existsSync("/usr/bin/python3")) return "/usr/bin/python3 is not installed";
  const py = spawnSync("/usr/bin/python3", ["-c", "import gi; gi.require_version('Gtk','3.0'); from gi.repository import Gtk; import pyatspi, cairo"], {
    stdio: "ignore",
    env: { ...process.env, DISPLAY: "" },
  });
  if (py.status !== 0) return "python3-pyatspi, python3-gi, gir1.2-gtk-3.0 or python3-cairo is missing for /usr/bin/python3";
  return null;
}

export interface TestApp {
  child: ChildProcessWithoutNullStreams;
  lines: string[];
  waitLine(pattern: RegExp, timeoutMs?: number): Promise<string>;
  kill(): void;
}

export async function desktopFixture(options: { maxTypeChars?: number } = {}) {
  const driver = new DesktopDriver({ display: "", screen: "1280x800", env: process.env });
  const desktop = await driver.start();
  const logs: string[] = [];
  const config = { ...CONFIG_DEFAULTS.computer_use, enabled: true, max_type_chars: options.maxTypeChars ?? 500 };
  const tool = computerUseTool(() => ({ config: () => config, driver: () => driver, logAction: (sessionId, line) => logs.push(`${sessionId}: ${line}`) }));
  const apps: TestApp[] = [];
  const ctx = (sessionId = "s-test"): ToolContext => ({ cwd: ROOT, sessionId, signal: new AbortController().signal, env: process.env });
  const run = async (args: Record<string, unknown>, sessionId?: string) => {
    const parsed = tool.args.parse(args);
    return tool.run(parsed, ctx(sessionId), { runTask: () => Promise.reject(new Error("no pool")) });
  };
  /** Run, expecting a failure: its ToolFailure. */
  const fail = async (args: Record<string, unknown>, sessionId?: string) => {
    try {
      await run(args, sessionId);
    } catch (error) {
      return error as Error & { reason?: string };
    }
    throw new Error(`expected ${JSON.stringify(args)} to fail`);
  };
  /** Start the test app; `accessible: false` starts it without its accessibility bridge (NO_AT_BRIDGE=1). */
  const launch = async (args: string[] = [], options: { accessible?: boolean } = {}): Promise<TestApp> => {
    const env = { ...desktop.env, GTK_OVERLAY_SCROLLING: "0", ...(options.accessible === false ? { NO_AT_BRIDGE: "1" } : {}) };
    const child = spawn("/usr/bin/python3", [TEST_APP, ...args], { env, stdio: ["pipe", "pipe", "pipe"] });
    const lines: string[] = [];
    let buf = "";
    let err = "";
    child.stdout.on("data", (d: Buffer) => {
      buf += d;
      const parts = buf.split("\n");
      buf = parts.pop()!;
      lines.push(...parts);
    });
    child.stderr.on("data", (d: Buffer) => (err += d));
    const app: TestApp = {
      child,
      lines,
      waitLine: (pattern, timeoutMs = 20_000) =>
        waitFor(
          () => `${pattern} from the test app (got: ${lines.join(" | ")}; stderr: ${err.slice(-500)})`,
          () => lines.find((l) => pattern.test(l)),
          timeoutMs,
        ),
      kill: () => child.kill("SIGKILL"),
    };
    apps.push(app);
    const title = args[args.indexOf("--title") + 1] ?? "CUA Test";
    await app.waitLine(/^ready /);
    if (options.accessible === false) return app;
    // Registered with the accessibility bus (the bridge registers shortly after the window maps).
    await waitFor(
      `${title} in the accessibility tree`,
      async () => (await driver.tree()).apps.some((a) => a.windows.some((w) => w.title === title && w.nodes.length > 3)),
      20_000,
    );
    return app;
  };
  return {
    driver,
    desktop,
    tool,
    config,
    logs,
    run,
    fail,
    launch,
    dispose: async () => {
      for (const a of apps) a.kill();
      driver.stop();
    },
  };
}
