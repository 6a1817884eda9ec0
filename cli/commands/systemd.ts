import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { basename, delimiter, join, resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { daemonEntry } from "../../shared/client/daemon-process.js";
import { homePaths } from "../../shared/paths.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

/** The unit of the default home (`~/.agent`); it keeps this stable name. */
export const UNIT_NAME = "agentd.service";

/**
 * The unit's name for `home`: `agentd.service` for the default home, else
 * `agentd-<folder name>-<8 hex of the path's hash>.service`, so each home has its own unit and
 * installing a second one never overwrites the first.
 */
export function unitName(home: string, env: NodeJS.ProcessEnv = process.env): string {
  const abs = resolve(home);
  if (abs === resolve(join(env.HOME?.trim() || homedir(), ".agent"))) return UNIT_NAME;
  const slug =
    basename(abs)
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 32) || "home";
  return `agentd-${slug}-${createHash("sha256").update(abs).digest("hex").slice(0, 8)}.service`;
}

function unitDir(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".config");
  return join(config, "systemd", "user");
}

/** `~/.config/systemd/user/<unit>` (XDG_CONFIG_HOME is honoured when set). */
export function unitPath(home: string, env: NodeJS.ProcessEnv = process.env): string {
  return join(unitDir(env), unitName(home, env));
}

/** The `Environment=` values a unit file sets (unquoted). */
function unitEnvironment(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/^Environment=(.*)$/gm)) {
    let v = m[1]!.trim();
    if (v.startsWith('"') && v.endsWith('"')) v = v.slice(1, -1).replace(/\\(.)/g, "$1");
    const eq = v.indexOf("=");
    if (eq > 0)
      out[v.slice(0, eq)] = v
        .slice(eq + 1)
        .replace(/\$\$/g, "$")
        .replace(/%%/g, "%");
  }
  return out;
}

/** Every agent unit in the user's unit folder: its name, path and the home and port it carries. */
function installedUnits(env: NodeJS.ProcessEnv = process.env): Array<{ name: string; path: string; home: string | null; port: string | null }> {
  const dir = unitDir(env);
  let names: string[] = [];
  try {
    names = readdirSync(dir).filter((n) => /^agentd(-.+)?\.service$/.test(n));
  } catch {}
  return names.map((name) => {
    const path = join(dir, name);
    let vars: Record<string, string> = {};
    try {
      vars = unitEnvironment(readFileSync(path, "utf8"));
    } catch {}
    return { name, path, home: vars.AGENT_HOME ? resolve(vars.AGENT_HOME) : null, port: vars.AGENT_GATEWAY_PORT ?? null };
  });
}

/**
 * The unit installed for `home`: its own name, or (written before units were named per home) an
 * `agentd.service` whose AGENT_HOME is this home. Null when none is.
 */
export function findUnit(home: string, env: NodeJS.ProcessEnv = process.env): { name: string; path: string } | null {
  const own = unitPath(home, env);
  if (existsSync(own)) return { name: unitName(home, env), path: own };
  const legacy = installedUnits(env).find((u) => u.name === UNIT_NAME && u.home === resolve(home));
  return legacy ? { name: legacy.name, path: legacy.path } : null;
}

/**
 * The gateway port the unit pins: `--port`, else AGENT_GATEWAY_PORT, else the home's
 * `gateway.port` in config.yaml, else the default.
 */
async function gatewayPort(home: string, flag: number | undefined, env: NodeJS.ProcessEnv): Promise<number> {
  if (flag !== undefined) {
    if (!Number.isInteger(flag) || flag < 0 || flag > 65535) throw new AgentError("usage.invalid", `--port must be 0-65535 (got ${flag})`);
    return flag;
  }
  // Loaded only here: `agent daemon status` (findUnit) does not pay for the YAML parser and the config schema.
  const [{ parse: parseYaml }, { resolveConfig }] = await Promise.all([import("yaml"), import("../../shared/config/resolve.js")]);
  let fromFile: Record<string, unknown> = {};
  try {
    fromFile = (parseYaml(readFileSync(homePaths(home).config, "utf8")) ?? {}) as Record<string, unknown>;
  } catch {}
  try {
    return resolveConfig(fromFile, env).gateway.port;
  } catch (error) {
    throw new AgentError("usage.invalid", `cannot tell the gateway port: ${(error as Error).message}; pass --port <n>`);
  }
}

/** systemd splits ExecStart on spaces and expands `%` and `$`: quote and escape what needs it. */
function quote(arg: string): string {
  const escaped = arg.replace(/%/g, "%%").replace(/\$/g, "$$$$");
  return /[\s"'\\]/.test(escaped) ? `"${escaped.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"` : escaped;
}

/**
 * The unit. Type=simple: the daemon is ready once its socket listens, and clients retry the
 * connect. KillMode=mixed sends SIGTERM to the daemon alone (it shuts down gracefully), then
 * SIGKILL to what is left in the cgroup only on timeout; kanban workers are spawned detached in
 * their own process groups and, with mixed, are not signalled on a normal stop, so they survive
 * a restart and reconnect.
 */
export function renderUnit(home: string, port: number, nodePath = process.execPath, script = daemonEntry()): string {
  return `# Written by \`agent daemon install\`; remove with \`agent daemon uninstall\`.
[Unit]
Description=agent daemon (agentd) for ${home}
After=network.target

[Service]
Type=simple
ExecStart=${quote(nodePath)} ${quote(script)} --foreground
Environment=${quote(`AGENT_HOME=${home}`)}
Environment=AGENT_GATEWAY_PORT=${port}
Environment=NODE_ENV=production
Restart=on-failure
RestartSec=2
KillMode=mixed
TimeoutStopSec=20
# Log lines on stderr carry a <priority> prefix journald understands.
SyslogIdentifier=${unitName(home).replace(/\.service$/, "")}

[Install]
WantedBy=default.target
`;
}

function findSystemctl(env: NodeJS.ProcessEnv = process.env): string | null {
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, "systemctl"))) return join(dir, "systemctl");
  }
  return null;
}

/** Run `systemctl --user …` best-effort: a machine without a user session bus must not fail the command. */
function systemctl(args: string[]): { ran: boolean; ok: boolean; detail?: string } {
  const bin = findSystemctl();
  if (!bin) return { ran: false, ok: false, detail: "systemctl not found" };
  try {
    execFileSync(bin, ["--user", ...args], { stdio: ["ignore", "ignore", "pipe"], timeout: 10_000 });
    return { ran: true, ok: true };
  } catch (error) {
    const stderr = String((error as { stderr?: Buffer }).stderr ?? "").trim();
    return { ran: true, ok: false, detail: stderr || (error as Error).message };
  }
}

export async function installUnit(env: CliEnv, o: { print: boolean; json: boolean; port?: number }): Promise<number> {
  const port = await gatewayPort(env.home, o.port, process.env);
  const unit = renderUnit(env.home, port);
  const name = unitName(env.home);
  const path = unitPath(env.home);
  if (o.print) {
    if (o.json) printResult({ name, path, unit }, true, () => "");
    else process.stdout.write(unit);
    return EXIT.ok;
  }
  // Two homes on one gateway port: the second daemon could not listen.
  const clash = port === 0 ? undefined : installedUnits().find((u) => u.path !== path && u.home !== resolve(env.home) && u.port === String(port));
  if (clash) {
    throw new AgentError(
      "systemd.port_taken",
      `the unit ${clash.name} (home ${clash.home ?? "?"}) already uses gateway port ${port}; give this home another: agent daemon install --port <n> (or set gateway.port in its config.yaml)`,
      { path: clash.path, port },
    );
  }
  // The default home's name may hold another home's unit, written before units were named per home.
  const squatter = installedUnits().find((u) => u.path === path && u.home !== null && u.home !== resolve(env.home));
  if (squatter) {
    throw new AgentError(
      "systemd.unit_taken",
      `${path} is the unit of another home (${squatter.home}), written before units were named per home; give it its own name first: AGENT_HOME='${squatter.home}' agent daemon install`,
      { path },
    );
  }
  // A unit this home had under the old shared name is replaced by its own.
  const legacy = installedUnits().find((u) => u.name === UNIT_NAME && u.path !== path && u.home === resolve(env.home));
  let previous: string | null = null;
  try {
    previous = readFileSync(path, "utf8");
  } catch {}
  try {
    mkdirSync(join(path, ".."), { recursive: true });
    writeFileSync(path, unit, { mode: 0o644 });
  } catch (error) {
    throw new AgentError("systemd.write_failed", `could not write ${path}: ${(error as Error).message}`, { path });
  }
  if (legacy) {
    systemctl(["disable", legacy.name]);
    try {
      unlinkSync(legacy.path);
    } catch {}
  }
  const reload = systemctl(["daemon-reload"]);
  const result = {
    name,
    path,
    home: env.home,
    port,
    replaced: previous !== null && previous !== unit,
    ...(legacy ? { removedLegacy: legacy.path } : {}),
    daemonReload: reload.ok ? "done" : reload.ran ? `failed: ${reload.detail}` : "skipped (no systemctl)",
    enable: `systemctl --user enable --now ${name}`,
  };
  printResult(result, o.json, (r) =>
    [
      `wrote ${r.path}${r.replaced ? " (replaced the previous unit)" : ""} for home ${r.home}, gateway port ${r.port}`,
      ...(r.removedLegacy ? [`removed ${r.removedLegacy}, this home's unit under the old shared name (enable the new one)`] : []),
      `systemctl --user daemon-reload: ${r.daemonReload}`,
      `enable and start it with:  ${r.enable}`,
      `(to keep it running after you log out:  loginctl enable-linger $USER)`,
      `if a daemon is already running outside systemd, stop it first: agent daemon stop`,
    ].join("\n"),
  );
  return EXIT.ok;
}

export async function uninstallUnit(env: CliEnv, o: { json: boolean }): Promise<number> {
  const found = findUnit(env.home);
  if (!found) {
    const path = unitPath(env.home);
    printResult({ path, removed: false }, o.json, () => `no unit for home ${env.home} at ${path}: nothing to remove`);
    return EXIT.ok;
  }
  const path = found.path;
  // Disable first so no dangling symlink is left in default.target.wants.
  const disable = systemctl(["disable", found.name]);
  try {
    unlinkSync(path);
  } catch (error) {
    throw new AgentError("systemd.remove_failed", `could not remove ${path}: ${(error as Error).message}`, { path });
  }
  const reload = systemctl(["daemon-reload"]);
  printResult({ path, removed: true, disabled: disable.ok, daemonReload: reload.ok }, o.json, () =>
    [
      `removed ${path}`,
      reload.ran ? `systemctl --user daemon-reload: ${reload.ok ? "done" : `failed: ${reload.detail}`}` : "",
      `a running daemon keeps running; stop it with: agent daemon stop`,
    ]
      .filter(Boolean)
      .join("\n"),
  );
  return EXIT.ok;
}
