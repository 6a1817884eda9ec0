import { homePaths } from "../../shared/paths.js";
import type { ConfigEntry, ConfigMigrationReport } from "../../shared/protocol/config.js";
import { AgentError } from "../../shared/errors.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { withDaemon } from "../with-daemon.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

const SPEC = {
  usage: "agent config <get|set|path|migrate>",
  description: "Read and change $AGENT_HOME/config.yaml (through the daemon, its only writer).",
  flags: {},
  hiddenSubcommands: ["list"],
  help: `Subcommands
  get [key]          a key's effective value and where it came from (default, file or env);
                     without a key, every key
  set <key> <value>  write a key to config.yaml, typed by its default (comments are kept,
                     the previous file is kept as config.yaml.bak); secrets belong in .env
  path               where config.yaml and .env are
  migrate            step config.yaml (and .env) forward to the current version; idempotent

Examples
  $ agent config get gateway.port
  $ agent config set logs.level debug
  $ agent config set providers.local.base_url http://127.0.0.1:8080/v1`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  switch (sub) {
    case "path": {
      expectArgs("path", args, 0);
      const p = homePaths(env.home);
      printResult({ config: p.config, env: p.env, home: env.home }, json, (r) => `config.yaml  ${r.config}\n.env         ${r.env}`);
      return EXIT.ok;
    }
    case "get":
    case "list": {
      if (args.length > 1) throw new AgentError("usage.invalid", "agent config get takes at most one key");
      return withDaemon(env, async (client) => {
        if (args[0]) {
          const entry = await client.call("config.get", { key: args[0] });
          printResult(entry, json, (e) => `${formatValue(e.value)}  (${describeOrigin(e)})`);
        } else {
          const all = await client.call("config.list", {});
          printResult(all, json, (r) =>
            [
              `# ${r.file} (version ${r.version})`,
              table(
                ["KEY", "VALUE", "FROM"],
                r.entries.map((e) => [e.key, formatValue(e.value), describeOrigin(e)]),
              ),
              ...r.warnings.map((w) => `warning: ${w}`),
            ].join("\n"),
          );
        }
        return EXIT.ok;
      });
    }
    case "set": {
      expectArgs("set", args, 2, "agent config set <key> <value>");
      return withDaemon(env, async (client) => {
        const r = await client.call("config.set", { key: args[0]!, value: args[1]! });
        printResult(r, json, () => {
          const lines = [`${r.key} = ${formatValue(r.value)} (in ${r.file})`];
          if (r.effective.origin === "env")
            lines.push(`note: ${r.effective.env} is set in the environment and overrides this (effective: ${formatValue(r.effective.value)})`);
          return lines.join("\n");
        });
        return EXIT.ok;
      });
    }
    case "migrate": {
      expectArgs("migrate", args, 0);
      return withDaemon(env, async (client) => {
        const r = await client.call("config.migrate", {});
        printResult(r, json, () => formatMigration(r));
        return EXIT.ok;
      });
    }
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent config needs a subcommand: get, set, path or migrate");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "config ${sub}"; see \`agent config --help\``);
  }
}

function expectArgs(sub: string, args: string[], n: number, usage = `agent config ${sub}`): void {
  if (args.length !== n)
    throw new AgentError("usage.invalid", `${usage} takes ${n === 0 ? "no arguments" : `${n} argument${n > 1 ? "s" : ""}`}; usage: ${usage}`);
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return value === "" ? '""' : value;
  return JSON.stringify(value);
}

function describeOrigin(e: ConfigEntry): string {
  return e.origin === "env" ? `env ${e.env}` : e.origin;
}

function formatMigration(r: ConfigMigrationReport & { atStartup: ConfigMigrationReport | null }): string {
  const lines: string[] = [];
  const describe = (m: ConfigMigrationReport, when: string) => {
    lines.push(`migrated ${m.file} from version ${m.fromVersion} to ${m.toVersion}${when}:`);
    for (const s of m.steps) {
      lines.push(`  ${s.from} → ${s.to}: ${s.description}`);
      for (const n of s.notes) lines.push(`      ${n}`);
    }
    if (m.backup) lines.push(`  previous config kept as ${m.backup}`);
    if (m.env.backup) lines.push(`  previous .env kept as ${m.env.backup}`);
  };
  if (r.atStartup) describe(r.atStartup, " (when the daemon started)");
  if (r.changed) describe(r, "");
  if (!r.changed) {
    lines.push(r.fromVersion === null ? `no ${r.file} yet: nothing to migrate (defaults apply)` : `${r.file} is at version ${r.toVersion}: nothing to do`);
  }
  return lines.join("\n");
}
