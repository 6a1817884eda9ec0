import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { LogFollower, readLastLines } from "../../shared/log-follow.js";
import { homePaths } from "../../shared/paths.js";
import { terminalJson, terminalText } from "../../shared/terminal-text.js";
import { printJson, snakeKeys } from "../output.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";

/**
 * `agent logs`: reads the JSON-lines files under $AGENT_HOME/logs directly (read-only), so it
 * works when the daemon is down or failed to start.
 */
const SPEC = {
  usage: "agent logs [--component <c>] [--lines N] [--follow] [--json]",
  description: "Show or follow a component's log ($AGENT_HOME/logs/<component>.log).",
  flags: {
    component: { type: "string", shortFlag: "c" },
    lines: { type: "number", shortFlag: "n" },
    follow: { type: "boolean", shortFlag: "f" },
    list: { type: "boolean" },
  },
  help: `Options
  -c, --component <c>  the component (default: daemon); --list shows which have logs
  -n, --lines N        how many of the last lines to show (default 50; 0 for none)
  -f, --follow         keep printing new lines, across rotations, until Ctrl-C
  --list               list the components that have logs
  --json               {"records": [...]} (with --follow: one JSON object per line)`,
} as const;

const COMPONENT = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;
/** How often `--follow` looks at the file (a stat; the reading is in shared/log-follow.ts). */
const FOLLOW_INTERVAL_MS = 150;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length > 0) throw new AgentError("usage.invalid", `agent logs takes no arguments (got ${cli.input.join(" ")}); use --component <c>`);
  const dir = homePaths(env.home).logs;
  const json = Boolean(cli.flags.json);
  if (cli.flags.list) {
    const list = listComponents(dir);
    if (json) printJson({ components: list });
    else
      process.stdout.write(
        terminalText(
          list.length
            ? list.map((c) => `${c.component.padEnd(16)} ${c.bytes} bytes${c.rotated ? `, ${c.rotated} rotated` : ""}`).join("\n") + "\n"
            : `no logs in ${dir}\n`,
        ),
      );
    return EXIT.ok;
  }
  const component = cli.flags.component ?? "daemon";
  if (!COMPONENT.test(component)) throw new AgentError("usage.invalid", `invalid component name ${JSON.stringify(component)}`);
  const lines = cli.flags.lines ?? 50;
  if (!Number.isInteger(lines) || lines < 0) throw new AgentError("usage.invalid", `--lines must be a whole number of at least 0, got ${cli.flags.lines}`);
  const file = join(dir, `${component}.log`);
  const exists = existsFile(file);
  if (!exists && !cli.flags.follow) {
    const known = listComponents(dir).map((c) => c.component);
    throw new AgentError(
      "logs.not_found",
      `no log for component "${component}" in ${dir}${known.length ? `; components with logs: ${known.join(", ")}` : " (no logs yet)"}`,
    );
  }
  const { lines: last, end } = readLastLines(file, lines);
  if (!cli.flags.follow) {
    if (json) printJson({ records: last.map(toRecord) });
    else for (const line of last) process.stdout.write(formatLine(line) + "\n");
    return EXIT.ok;
  }
  const print = (line: string) => process.stdout.write((json ? terminalJson(snakeKeys(toRecord(line))) : formatLine(line)) + "\n");
  for (const line of last) print(line);
  // From where the lines shown ended (a file that does not exist yet: from its start once it does).
  const onLines = (got: string[]) => {
    for (const line of got) if (line.trim()) print(line);
  };
  const follower = new LogFollower(file, { from: exists ? end : "start", onLines });
  await new Promise<void>((resolve) => {
    follower.start(FOLLOW_INTERVAL_MS);
    const stop = () => {
      follower.stop();
      resolve();
    };
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
  return EXIT.ok;
}

function existsFile(file: string): boolean {
  try {
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

function listComponents(dir: string): Array<{ component: string; bytes: number; rotated: number }> {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith(".log"))
    .sort()
    .map((n) => ({
      component: n.slice(0, -4),
      bytes: statSync(join(dir, n)).size,
      rotated: names.filter((m) => m.startsWith(n + ".") && /\.\d+$/.test(m)).length,
    }));
}

interface LogRecord {
  ts?: string;
  level?: string;
  component?: string;
  msg?: string;
  [key: string]: unknown;
}

function toRecord(line: string): LogRecord {
  try {
    const value = JSON.parse(line) as unknown;
    if (value && typeof value === "object" && !Array.isArray(value)) return value as LogRecord;
  } catch {}
  return { msg: line, raw: true };
}

/**
 * `2026-11-22 10:04:05.123 INFO  rpc  message key=value …`; a line that is not JSON prints as it
 * is. Either way cleaned for the terminal: log lines carry model and tool text.
 */
export function formatLine(line: string): string {
  return terminalText(formatRecord(line)).replace(/\n/g, " ");
}

function formatRecord(line: string): string {
  const r = toRecord(line);
  if (r.raw === true) return line;
  const { ts, level, component, msg, ...rest } = r;
  const when = typeof ts === "string" ? ts.replace("T", " ").replace(/Z$/, "") : "";
  const fields = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" && !/\s/.test(v) ? v : JSON.stringify(v)}`)
    .join(" ");
  return [
    when,
    String(level ?? "")
      .toUpperCase()
      .padEnd(5),
    component ?? "",
    msg ?? "",
    fields,
  ]
    .filter((p) => p !== "")
    .join("  ");
}
