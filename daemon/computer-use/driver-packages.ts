/**
 * The computer_use driver: Debian packages (Xvfb, xdotool, AT-SPI and the Python bindings the
 * helper imports) plus the project's own helper (cua-helper.py), versioned together as
 * CUA_DRIVER_VERSION. `agent computer-use install` installs the packages (apt when the daemon
 * runs as root, otherwise it answers the exact command) and records the version and the
 * packages' versions; AGENT_CUA_DRIVER_VERSION pins the version an install must match.
 */
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { envValue } from "../../shared/config/env.js";
import type { ComputerUseInstallResult } from "../../shared/protocol/computer-use.js";
import { readTextOrNull, writeFileAtomic } from "../store/atomic-file.js";
import { helperScript, SYSTEM_PYTHON } from "./desktop-helper.js";
import { atSpiLauncher, which } from "./private-display.js";

/** The helper's protocol and the package set it needs; bumped when either changes. */
export const CUA_DRIVER_VERSION = "1.0.0";

/** The Debian packages of the driver (the same set as .ci/run's apt line). */
export const DRIVER_PACKAGES = ["xvfb", "xdotool", "at-spi2-core", "python3-pyatspi", "python3-gi", "gir1.2-gtk-3.0", "python3-cairo", "dbus", "dbus-x11"];

export interface DriverRecord {
  version: string;
  packages: Record<string, string | null>;
  installedAt: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs: number): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, { env, timeout: timeoutMs, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) => {
      const code = error ? (typeof (error as { code?: unknown }).code === "number" ? ((error as { code: number }).code as number) : 127) : 0;
      resolve({ code, stdout: String(stdout), stderr: String(stderr) });
    });
  });
}

/** Each package's installed version (dpkg-query), null when absent or when there is no dpkg. */
export async function packageVersions(env: NodeJS.ProcessEnv): Promise<Record<string, string | null>> {
  const out: Record<string, string | null> = Object.fromEntries(DRIVER_PACKAGES.map((p) => [p, null]));
  const dpkg = which("dpkg-query", env);
  if (!dpkg) return out;
  // biome-ignore lint/suspicious/noTemplateCurlyInString: dpkg-query's own format, not a template
  const r = await run(dpkg, ["-W", "-f=${Package} ${Status} ${Version}\\n", ...DRIVER_PACKAGES], env, 10_000);
  for (const line of r.stdout.split("\n")) {
    const m = /^(\S+) install ok installed (\S+)$/.exec(line.trim());
    if (m && m[1]! in out) out[m[1]!] = m[2]!;
  }
  return out;
}

/** What the driver lacks here, as the user would fix it (a command or a package). */
export async function missingParts(env: NodeJS.ProcessEnv, needXvfb: boolean): Promise<string[]> {
  const missing: string[] = [];
  if (needXvfb && !which("Xvfb", env)) missing.push("Xvfb (package xvfb)");
  if (needXvfb && !which("dbus-daemon", env)) missing.push("dbus-daemon (package dbus)");
  if (!which("xdotool", env)) missing.push("xdotool (package xdotool)");
  if (!atSpiLauncher()) missing.push("at-spi-bus-launcher (package at-spi2-core)");
  if (!existsSync(helperScript())) missing.push(`the helper script ${helperScript()}`);
  if (!existsSync(SYSTEM_PYTHON)) {
    missing.push(`${SYSTEM_PYTHON} (package python3)`);
    return missing;
  }
  const probe = [
    "import json",
    "r = {}",
    "def t(name, f):",
    "    try:",
    "        f(); r[name] = True",
    "    except Exception:",
    "        r[name] = False",
    "t('gi', lambda: __import__('gi').require_version('Gdk', '3.0'))",
    "t('gdk', lambda: __import__('gi.repository.Gdk'))",
    "t('pyatspi', lambda: __import__('pyatspi'))",
    "t('cairo', lambda: __import__('cairo'))",
    "print(json.dumps(r))",
  ].join("\n");
  const r = await run(SYSTEM_PYTHON, ["-c", probe], { ...env, DISPLAY: "" }, 15_000);
  let got: Record<string, boolean> = {};
  try {
    got = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}");
  } catch {
    got = {};
  }
  if (!got.gi) missing.push("python3 module gi (package python3-gi)");
  else if (!got.gdk) missing.push("Gdk 3 introspection data (package gir1.2-gtk-3.0)");
  if (!got.pyatspi) missing.push("python3 module pyatspi (package python3-pyatspi)");
  if (!got.cairo) missing.push("python3 module cairo (package python3-cairo)");
  return missing;
}

export async function readDriverRecord(file: string): Promise<DriverRecord | null> {
  const text = await readTextOrNull(file);
  if (!text) return null;
  try {
    return JSON.parse(text) as DriverRecord;
  } catch {
    return null;
  }
}

export function driverPin(): string | null {
  return envValue("AGENT_CUA_DRIVER_VERSION") || null;
}

/** The apt command line that installs (or, with upgrade, upgrades) the packages. */
export function aptCommand(upgrade: boolean, root: boolean): string {
  const sudo = root ? "" : "sudo ";
  const install = `${sudo}apt-get install -y --no-install-recommends ${upgrade ? "" : "--no-upgrade "}${DRIVER_PACKAGES.join(" ")}`;
  return upgrade ? `${sudo}apt-get update && ${install}` : install;
}

export async function installDriver(options: { upgrade: boolean; recordFile: string; env: NodeJS.ProcessEnv }): Promise<ComputerUseInstallResult> {
  const pin = driverPin();
  if (pin && pin !== CUA_DRIVER_VERSION)
    throw new AgentError(
      "computer_use.driver_pinned",
      `AGENT_CUA_DRIVER_VERSION pins driver ${pin}, but this agent ships driver ${CUA_DRIVER_VERSION}: install the agent release that ships ${pin}, or unset the pin`,
    );
  const root = process.getuid?.() === 0;
  const apt = which("apt-get", options.env);
  if (!root || !apt) {
    const packages = await packageVersions(options.env);
    // Already complete: the record is written all the same, so status shows the version.
    if (Object.values(packages).every((v) => v !== null)) await record(options.recordFile, packages);
    return { outcome: "command", command: aptCommand(options.upgrade, false), version: CUA_DRIVER_VERSION, packages };
  }
  const env = { ...options.env, DEBIAN_FRONTEND: "noninteractive" };
  let output = "";
  if (options.upgrade) {
    const u = await run(apt, ["update"], env, 10 * 60_000);
    output += u.stdout + u.stderr;
    if (u.code !== 0) throw new AgentError("computer_use.install_failed", `apt-get update failed (exit ${u.code}): ${tail(u.stderr || u.stdout)}`);
  }
  const args = ["install", "-y", "--no-install-recommends", ...(options.upgrade ? [] : ["--no-upgrade"]), ...DRIVER_PACKAGES];
  const r = await run(apt, args, env, 20 * 60_000);
  output += r.stdout + r.stderr;
  if (r.code !== 0) throw new AgentError("computer_use.install_failed", `apt-get install failed (exit ${r.code}): ${tail(r.stderr || r.stdout)}`);
  const packages = await packageVersions(options.env);
  await record(options.recordFile, packages);
  return { outcome: "ran", command: aptCommand(options.upgrade, true), version: CUA_DRIVER_VERSION, packages, output: tail(output) };
}

async function record(file: string, packages: Record<string, string | null>): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const doc: DriverRecord = { version: CUA_DRIVER_VERSION, packages, installedAt: new Date().toISOString() };
  await writeFileAtomic(file, `${JSON.stringify(doc, null, 2)}\n`);
}

function tail(text: string): string {
  return text.trim().split("\n").slice(-8).join("\n");
}
