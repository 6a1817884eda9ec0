import { AgentError } from "../../shared/errors.js";
import { terminalText } from "../../shared/terminal-text.js";
import type { UpdateReport, UpdateRequest, UpdateResult } from "../../shared/update.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { runDaemonChild } from "../daemon-child.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

const SPEC = {
  usage: "agent update [--check]",
  description: "Update this install of agent, then restart the home's daemon on the new code.",
  flags: {
    check: { type: "boolean" },
  },
  help: `A git install (the app's folder is a clone) tracks main: fetch origin main, fast-forward,
npm ci, npm run build. It refuses when tracked files have local changes, when another branch is
checked out, or when the history diverged. A package install tracks tagged releases: the
registry's latest version (npm view), installed with npm install -g.

Then the home's daemon, if one runs, is restarted gracefully (running kanban workers are left
running and adopted by the new daemon), and the desktop-control driver is refreshed when one is
installed (agent computer-use install --upgrade).

Options
  --check     only report what is available; change nothing

Environment
  AGENT_UPDATE_INSTALL_COMMAND, AGENT_UPDATE_BUILD_COMMAND   JSON arrays replacing npm ci / npm run build
  AGENT_UPDATE_NPM                                           the npm executable (its config applies: registry, prefix)`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length) throw new AgentError("usage.invalid", `agent update takes no arguments (got ${cli.input.join(" ")}); usage: ${SPEC.usage}`);
  const json = Boolean(cli.flags.json);
  const request: UpdateRequest = { home: env.home, check: Boolean(cli.flags.check) };
  // The work runs in a process of its own (daemon/update/update-main.js, by its path): no daemon
  // needs to run, and it restarts the daemon itself. This side shows its progress.
  const progress = (line: string) => {
    if (!json) process.stderr.write(terminalText(`${line}\n`));
  };
  const result = await runUpdate(request, progress);
  printResult(result, json, text);
  return EXIT.ok;
}

function runUpdate(request: UpdateRequest, progress: (line: string) => void): Promise<UpdateResult> {
  // A long step (npm ci, a build) says every 15 s that it is still going.
  let ticker: NodeJS.Timeout | undefined;
  const quiet = () => clearInterval(ticker);
  return runDaemonChild<UpdateResult, Extract<UpdateReport, { type: "step" | "step_done" }>>("daemon/update/update-main.js", request, {
    onMessage(m) {
      quiet();
      if (m.type === "step") {
        progress(`… ${m.detail}`);
        const began = Date.now();
        ticker = setInterval(() => progress(`  ${m.step}: still running (${Math.round((Date.now() - began) / 1000)} s)`), 15_000);
        ticker.unref();
      } else progress(`  ${m.step} done (${(m.ms / 1000).toFixed(1)} s)`);
    },
    lost: (how) => new AgentError("update.failed", `the update process ended (${how}) before it finished`),
    onClose: quiet,
  });
}

function text(r: UpdateResult): string {
  const short = (v: string) => (r.kind === "git" ? v.slice(0, 12) : v);
  const lines: string[] = [];
  const what = r.kind === "git" ? `git install at ${r.app_dir} (tracks main)` : `package install at ${r.app_dir} (tracks tagged releases)`;
  if (r.up_to_date) return `${what}: up to date (${short(r.current)})`;
  if (r.check) {
    lines.push(`${what}: ${short(r.available)} is available (installed: ${short(r.current)})`);
    if (r.commits) lines.push(`${r.commits.count} new commit${r.commits.count === 1 ? "" : "s"}:`, ...r.commits.log.map((l) => `  ${l}`));
    lines.push("run `agent update` to install it");
    return lines.join("\n");
  }
  lines.push(`${what}: updated ${short(r.current)} → ${short(r.available)}`);
  if (r.daemon?.restarted)
    lines.push(
      `daemon restarted (pid ${r.daemon.pid}${r.daemon.version ? `, version ${r.daemon.version}` : ""}${r.daemon.commit ? ` at ${r.daemon.commit.slice(0, 12)}` : ""})`,
    );
  else if (r.daemon?.note) lines.push(`daemon: ${r.daemon.note}`);
  for (const h of r.hooks) if (h.ran) lines.push(`${h.name}: ${h.detail}`);
  return lines.join("\n");
}
