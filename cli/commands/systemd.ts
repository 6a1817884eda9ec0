import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { daemonEntry } from "../../shared/client/index.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

export const UNIT_NAME = "agentd.service";

/** `~/.config/systemd/user/agentd.service` (XDG_CONFIG_HOME is honoured when set). */
export function unitPath(env: NodeJS.ProcessEnv = process.env): string {
  const config = env.XDG_CONFIG_HOME?.trim() || join(env.HOME?.trim() || homedir(), ".config");
  return join(config, "systemd", "user", UNIT_NAME);
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
export function renderUnit(home: string, nodePath = process.execPath, script = daemonEntry()): string {
  return `# Written by \`agent daemon install\`; remove with \`agent daemon uninstall\`.
[Unit]
Description=agent daemon (agentd) for ${home}
After=network.target

[Service]
Type=simple
ExecStart=${quote(nodePath)} ${quote(script)} --foreground
Environment=${quote(`AGENT_HOME=${home}`)}
Environment=NODE_ENV=production
Restart=on-failure
RestartSec=2
KillMode=mixed
TimeoutStopSec=20
# Log lines on stderr carry a <priority> prefix journald understands.
SyslogIdentifier=agentd

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

export async function installUnit(env: CliEnv, o: { print: boolean; json: boolean }): Promise<number> {
  const unit = renderUnit(env.home);
  const path = unitPath();
  if (o.print) {
    if (o.json) printResult({ path, unit }, true, () => "");
    else process.stdout.write(unit);
    return EXIT.ok;
  }
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
  const reload = systemctl(["daemon-reload"]);
  const result = {
    path,
    replaced: previous !== null && previous !== unit,
    daemonReload: reload.ok ? "done" : reload.ran ? `failed: ${reload.detail}` : "skipped (no systemctl)",
    enable: `systemctl --user enable --now ${UNIT_NAME}`,
  };
  printResult(result, o.json, (r) =>
    [
      `wrote ${r.path}${r.replaced ? " (replaced the previous unit)" : ""}`,
      `systemctl --user daemon-reload: ${r.daemonReload}`,
      `enable and start it with:  ${r.enable}`,
      `(to keep it running after you log out:  loginctl enable-linger $USER)`,
      `if a daemon is already running outside systemd, stop it first: agent daemon stop`,
    ].join("\n"),
  );
  return EXIT.ok;
}

export async function uninstallUnit(_env: CliEnv, o: { json: boolean }): Promise<number> {
  const path = unitPath();
  if (!existsSync(path)) {
    printResult({ path, removed: false }, o.json, () => `no unit at ${path}: nothing to remove`);
    return EXIT.ok;
  }
  // Disable first so no dangling symlink is left in default.target.wants.
  const disable = systemctl(["disable", UNIT_NAME]);
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
