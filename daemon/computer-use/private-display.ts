/**
 * The private desktop the daemon drives by default: an Xvfb display of its own, a session D-Bus
 * for it and the accessibility bus (at-spi-bus-launcher), started on first use and stopped with
 * the daemon. Never the user's own session unless `computer_use.display` names it.
 *
 * What AT-SPI needs (found on Debian 12, at-spi2-core 2.46): the a11y bus is announced both on the
 * session bus (org.a11y.Bus) and as the AT_SPI_BUS property of the display's root window, which
 * libatspi reads first. So the launcher must run with this display's DISPLAY and this session
 * bus; an application (GTK 3 loads its atk-bridge unless NO_AT_BRIDGE=1) started with the same
 * DISPLAY and DBUS_SESSION_BUS_ADDRESS registers its tree there. A client without a session bus
 * address makes D-Bus autolaunch a second bus (and a second launcher that rewrites the
 * property), so every process here is given the address explicitly.
 *
 * The display takes only clients that present its cookie: Xvfb runs with `-auth <file>`, a fresh
 * Xauthority file (mode 0600, in a 0700 directory of its own, removed at stop) holding one random
 * MIT-MAGIC-COOKIE-1 for any display number (the "wild" family: the number is known only once
 * Xvfb has picked it), and every process on the display gets `XAUTHORITY` pointing at it. Another
 * local user can no longer connect to it, read its screen or send it keys.
 */
import { randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import type { ChildProcess } from "node:child_process";
import { delimiter, join } from "node:path";
import { ToolFailure } from "../../shared/errors.js";
import { spawnGroup, type ProcessGroup } from "../process/process-group.js";

export const AT_SPI_LAUNCHERS = ["/usr/libexec/at-spi-bus-launcher", "/usr/lib/at-spi2-core/at-spi-bus-launcher"];

/** `name` on PATH, or null. */
export function which(name: string, env: NodeJS.ProcessEnv): string | null {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const path = join(dir, name);
    if (existsSync(path)) return path;
  }
  return null;
}

export function atSpiLauncher(): string | null {
  return AT_SPI_LAUNCHERS.find((p) => existsSync(p)) ?? null;
}

export interface DesktopEnv {
  display: string;
  /** The session bus of this display (the private one's; the daemon's own for a configured display, when it has one). */
  busAddress: string | null;
  private: boolean;
  /** Environment for a process on this display (the helper, xdotool, an app). */
  env: NodeJS.ProcessEnv;
}

interface Started {
  child: ChildProcess;
  group: ProcessGroup | null;
}

/** The first line a process prints on stdout (Xvfb -displayfd, dbus-daemon --print-address). */
function firstLine(p: Started, what: string, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let out = "";
    let err = "";
    const timer = setTimeout(
      () => done(new ToolFailure("driver_unavailable", `${what} did not start within ${timeoutMs} ms${err ? `: ${err.trim()}` : ""}`)),
      timeoutMs,
    );
    const done = (error: Error | null, line?: string) => {
      clearTimeout(timer);
      p.child.stdout?.off("data", onData);
      p.child.off("exit", onExit);
      p.child.off("error", onError);
      if (error) reject(error);
      else resolve(line!);
    };
    const onData = (chunk: Buffer) => {
      out += chunk.toString("utf8");
      const nl = out.indexOf("\n");
      if (nl >= 0) done(null, out.slice(0, nl).trim());
    };
    const onExit = (code: number | null) =>
      done(new ToolFailure("driver_unavailable", `${what} ended at start (exit ${code})${err ? `: ${err.trim().slice(-300)}` : ""}`));
    const onError = (error: Error) => done(new ToolFailure("driver_unavailable", `${what} could not be started: ${error.message}`));
    p.child.stderr?.on("data", (chunk: Buffer) => {
      err = (err + chunk.toString("utf8")).slice(-1_000);
    });
    p.child.stdout?.on("data", onData);
    p.child.on("exit", onExit);
    p.child.on("error", onError);
  });
}

/**
 * An Xauthority file's bytes (libXau's format: each field a big-endian 16-bit length and its
 * bytes) with one entry: family Wild (0xffff: any address, any display number), the cookie.
 */
export function xauthorityEntry(cookie: Buffer): Buffer {
  const field = (b: Buffer) => {
    const len = Buffer.alloc(2);
    len.writeUInt16BE(b.length);
    return Buffer.concat([len, b]);
  };
  const family = Buffer.alloc(2);
  family.writeUInt16BE(0xffff);
  return Buffer.concat([family, field(Buffer.alloc(0)), field(Buffer.alloc(0)), field(Buffer.from("MIT-MAGIC-COOKIE-1")), field(cookie)]);
}

export class PrivateDisplay {
  #groups: Started[] = [];
  #desktop: DesktopEnv | null = null;
  #authDir: string | null = null;

  constructor(
    private readonly baseEnv: NodeJS.ProcessEnv,
    private readonly screen: string,
  ) {}

  get desktop(): DesktopEnv | null {
    return this.#desktop;
  }

  async start(): Promise<DesktopEnv> {
    if (this.#desktop) return this.#desktop;
    const xvfb = which("Xvfb", this.baseEnv);
    if (!xvfb) throw new ToolFailure("driver_unavailable", "Xvfb is not installed (package xvfb): agent computer-use install");
    const dbus = which("dbus-daemon", this.baseEnv);
    if (!dbus) throw new ToolFailure("driver_unavailable", "dbus-daemon is not installed (package dbus): agent computer-use install");
    try {
      this.#authDir = mkdtempSync(join(tmpdir(), "agent-xauth-"));
      const authFile = join(this.#authDir, "Xauthority");
      writeFileSync(authFile, xauthorityEntry(randomBytes(16)), { mode: 0o600 });
      // -displayfd 1: Xvfb picks a free display number and prints it once it accepts connections.
      const x = spawnGroup(xvfb, ["-displayfd", "1", "-auth", authFile, "-screen", "0", `${this.screen}x24`, "-nolisten", "tcp", "-noreset"], {
        env: { ...this.baseEnv, XAUTHORITY: authFile },
        label: "computer_use Xvfb",
      });
      this.#groups.push(x);
      // Xvfb gone (killed, crashed): everything on it goes too; the next action starts a new one.
      x.child.once("exit", () => {
        if (this.#groups.includes(x)) this.stop();
      });
      const number = await firstLine(x, "Xvfb", 15_000);
      if (!/^\d+$/.test(number)) throw new ToolFailure("driver_unavailable", `Xvfb printed no display number (${number})`);
      const display = `:${number}`;
      const b = spawnGroup(dbus, ["--session", "--nofork", "--nopidfile", "--print-address=1"], {
        env: { ...this.baseEnv, DISPLAY: display, XAUTHORITY: authFile },
        label: "computer_use dbus-daemon",
      });
      this.#groups.push(b);
      const busAddress = await firstLine(b, "dbus-daemon", 10_000);
      const env: NodeJS.ProcessEnv = {
        ...this.baseEnv,
        DISPLAY: display,
        XAUTHORITY: authFile,
        DBUS_SESSION_BUS_ADDRESS: busAddress,
        GTK_MODULES: "gail:atk-bridge",
        NO_AT_BRIDGE: "0",
        GNOME_ACCESSIBILITY: "1",
      };
      delete env.AT_SPI_BUS_ADDRESS;
      const launcher = atSpiLauncher();
      if (launcher) {
        const a = spawnGroup(launcher, ["--launch-immediately"], { env, label: "computer_use at-spi-bus-launcher" });
        a.child.stdout?.resume();
        a.child.stderr?.resume();
        this.#groups.push(a);
      }
      this.#desktop = { display, busAddress, private: true, env };
      return this.#desktop;
    } catch (error) {
      this.stop();
      throw error;
    }
  }

  /** Stop the launcher, the bus and Xvfb (the one grace rule of daemon/process). */
  stop(): void {
    for (const g of this.#groups.reverse()) {
      g.child.stdout?.destroy();
      g.child.stderr?.destroy();
      g.group?.stop(1_000);
      g.child.once("exit", () => g.group?.forget());
    }
    this.#groups = [];
    this.#desktop = null;
    if (this.#authDir) rmSync(this.#authDir, { recursive: true, force: true });
    this.#authDir = null;
  }

  /** The Xauthority file of the running display (tests check its mode and that the display needs it). */
  get authFile(): string | null {
    return this.#authDir ? join(this.#authDir, "Xauthority") : null;
  }

  /** The pids of the processes (tests check they are gone after the daemon stops). */
  pids(): number[] {
    return this.#groups.map((g) => g.child.pid).filter((p): p is number => typeof p === "number");
  }
}
