/**
 * The command line: `agent <argv>` run to its exit code, its output written to process.stdout and
 * process.stderr. The `agent` executable (cli/main.ts) is this and nothing else; the test suite's
 * CLI host (test/helpers/cli-host.ts) runs it in a worker thread, many calls in one thread.
 */
import { AgentError, toAgentError } from "../shared/errors.js";
import { resolveHome } from "../shared/paths.js";
import { terminalJson, terminalText } from "../shared/terminal-text.js";
import { APP_VERSION } from "../shared/version.js";
import { didYouMean, HelpShown } from "./args.js";
import type { CommandGroup } from "./command.js";
import { exitCodeFor, EXIT } from "./exit-codes.js";
import { envValue } from "../shared/config/env.js";

/** Command groups, loaded only when used so start-up stays lean. */
const GROUPS: Record<string, { summary: string; load: () => Promise<CommandGroup> }> = {
  daemon: { summary: "start, stop, inspect and install the background daemon", load: () => import("./commands/daemon.js") },
  chat: { summary: "talk to the agent (interactive, or one prompt with -q)", load: () => import("./commands/chat.js") },
  config: { summary: "read and change config.yaml (get, set, path, migrate)", load: () => import("./commands/config.js") },
  logs: { summary: "show or follow a component's log", load: () => import("./commands/logs.js") },
  actors: { summary: "create, call and inspect actors; scaffold actor modules", load: () => import("./commands/actors.js") },
  profile: { summary: "profiles: create, list, use, describe; install and update distributions", load: () => import("./commands/profile.js") },
  bundles: { summary: "skill bundles: list, show, create, delete, reload", load: () => import("./commands/bundles.js") },
  memory: { summary: "the agent's memory across sessions: setup, status, off", load: () => import("./commands/memory.js") },
  tools: { summary: "the agent's tools: which are offered, and what the others need", load: () => import("./commands/tools.js") },
  sessions: { summary: "past sessions: list, show, search, delete, export, reindex", load: () => import("./commands/sessions.js") },
  backup: { summary: "write a .tar.gz of AGENT_HOME (--quick, --label)", load: () => import("./commands/backup.js") },
  import: { summary: "restore a backup into an empty AGENT_HOME", load: () => import("./commands/import.js") },
  cron: { summary: "scheduled jobs: list, add, edit, pause, resume, run, remove, logs", load: () => import("./commands/cron.js") },
  lsp: { summary: "language servers behind write/patch diagnostics (status, list, install, restart, which)", load: () => import("./commands/lsp.js") },
  kanban: { summary: "the kanban board: tasks, links, the dispatcher and its workers", load: () => import("./commands/kanban.js") },
  approvals: { summary: "approvals of risky tool calls: list, revoke, pending, answer", load: () => import("./commands/approvals.js") },
  setup: { summary: "guided set-up of a model provider: preset, key, model, test call", load: () => import("./commands/setup.js") },
  "api-server": { summary: "the OpenAI-compatible API server: start, stop, status", load: () => import("./commands/api-server.js") },
  channels: { summary: "messaging adapters: list, status, test, allow, deny, handoff", load: () => import("./commands/channels.js") },
  mcp: { summary: "MCP servers: list, tools, test, add, remove, restart; serve this agent's tools", load: () => import("./commands/mcp.js") },
  "coder-runtime": { summary: "the coder runtime (a codex app-server): status, install", load: () => import("./commands/coder-runtime.js") },
  auth: { summary: "provider sign-in: login (OAuth device code), status, logout", load: () => import("./commands/auth.js") },
  "computer-use": { summary: "the computer_use tool's desktop driver: status, install", load: () => import("./commands/computer-use.js") },
  proxy: { summary: "the local OpenAI-compatible proxy: start, stop, status, providers", load: () => import("./commands/proxy.js") },
  debug: { summary: "diagnostics: share writes a redacted bundle (--upload sends it to debug.share_url)", load: () => import("./commands/debug.js") },
  update: { summary: "update this install (git: fast-forward and build; npm: newest release); --check", load: () => import("./commands/update.js") },
  dashboard: { summary: "the web dashboard: serve it, print a one-time sign-in link, open the browser", load: () => import("./commands/dashboard.js") },
};

/**
 * The global `--profile <name>` / `-p <name>` (also `--profile=<name>`, `-p<name>`), taken out
 * of argv before a command parses its own flags (words after `--` are left alone). It reaches
 * the daemon as the connection's profile through AGENT_PROFILE (shared/client), which the
 * daemon checks at initialize.
 */
function takeProfile(argv: string[]): string[] {
  const end = argv.indexOf("--");
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (end >= 0 && i >= end) {
      rest.push(a);
      continue;
    }
    let value: string | undefined;
    if (a === "--profile" || a === "-p") {
      value = argv[++i];
      if (value === undefined || value.startsWith("-")) throw new AgentError("usage.missing_value", `${a} needs a profile name`);
    } else if (a.startsWith("--profile=")) value = a.slice("--profile=".length);
    else if (/^-p[^-]/.test(a)) value = a.slice(2);
    else {
      rest.push(a);
      continue;
    }
    if (!value) throw new AgentError("usage.missing_value", "--profile needs a profile name");
    process.env.AGENT_PROFILE = value;
  }
  return rest;
}

function mainHelp(): string {
  const width = Math.max(...Object.keys(GROUPS).map((g) => g.length));
  const groups = Object.entries(GROUPS)
    .map(([name, g]) => `    ${name.padEnd(width)}  ${g.summary}`)
    .join("\n");
  return `
  agent ${APP_VERSION}: a terminal-first AI agent workstation

  Usage
    $ agent <command> [options]
    $ agent --tui          open the terminal UI (starts the daemon if needed)

  Commands
${groups}

  Options
    --version   print the version
    --help      this help; \`agent help <command>\` (or \`agent <command> --help\`) for a command's own
    --json      machine-readable output (every command that prints data)
    --debug     show stack traces of errors
    -p, --profile <name>   run as this profile (also AGENT_PROFILE; default: \`agent profile use\`)

  Home: ${resolveHome()} (set AGENT_HOME to use another)
`;
}

async function dispatch(allArgs: string[]): Promise<number> {
  const argv = takeProfile(allArgs);
  const first = argv.find((a) => !a.startsWith("-"));
  const firstIndex = first === undefined ? -1 : argv.indexOf(first);
  const leading = firstIndex < 0 ? argv : argv.slice(0, firstIndex);
  if (leading.includes("--version") || leading.includes("-v")) {
    process.stdout.write(leading.includes("--json") ? JSON.stringify({ version: APP_VERSION }) + "\n" : `${APP_VERSION}\n`);
    return EXIT.ok;
  }
  if (leading.includes("--tui")) {
    // Loaded only here: no other command pays for the TUI (or blessed).
    const { runTui } = await import("../tui/main.js");
    return (await runTui({ home: resolveHome(), dev: argv.includes("--dev"), argv })) ?? EXIT.ok;
  }
  if (first === undefined) {
    process.stdout.write(mainHelp());
    return leading.includes("--help") || leading.includes("-h") || argv.length === 0 ? EXIT.ok : EXIT.usage;
  }
  let name = first;
  let rest = [...leading, ...argv.slice(firstIndex + 1)];
  if (first === "help") {
    // `agent help [command]` is `agent [command] --help`.
    const topic = rest.find((a) => !a.startsWith("-"));
    if (topic === undefined) {
      process.stdout.write(mainHelp());
      return EXIT.ok;
    }
    name = topic;
    rest = ["--help"];
  }
  const group = Object.hasOwn(GROUPS, name) ? GROUPS[name] : undefined;
  if (!group) {
    const known = Object.keys(GROUPS);
    throw new AgentError(
      "usage.unknown_command",
      `unknown command "${name}"${didYouMean(name, [...known, "help"])}; commands are: ${known.join(", ")}. See \`agent --help\``,
    );
  }
  const module = await group.load();
  const code = await module.run(rest, { home: resolveHome(), interactive: Boolean(process.stdout.isTTY) });
  return code ?? EXIT.ok;
}

/** Run one command line; resolves with its exit code (errors printed here, as the user sees them). */
export async function runCommandLine(argv: string[]): Promise<number> {
  try {
    return await dispatch(argv);
  } catch (error) {
    if (error instanceof HelpShown) return EXIT.ok;
    const e = toAgentError(error);
    const debug = argv.includes("--debug") || envValue("AGENT_DEBUG") === "1";
    if (argv.includes("--json")) {
      process.stderr.write(terminalJson({ error: e.toJSON() }) + "\n");
    } else {
      // A message can carry what a provider or a tool said.
      process.stderr.write(terminalText(`agent: ${e.expected ? e.message : `unexpected error: ${e.message}`}\n`));
    }
    const stack = (error as Error)?.stack;
    if (stack && (debug || !e.expected)) process.stderr.write(`${stack}\n`);
    return exitCodeFor(e);
  }
}
