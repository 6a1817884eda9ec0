import { connectDaemon } from "../../shared/client/index.js";
import { AgentError } from "../../shared/errors.js";
import type { MemoryStatusResult } from "../../shared/protocol/skills.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

const SPEC = {
  usage: "agent memory <setup|status|off>",
  description: "The agent's memory: entries it keeps across sessions in <profile>/memories/ (its notes, and facts about you).",
  flags: {
    profile: { type: "string" },
  },
  help: `Subcommands
  setup    use the built-in file store (memory.provider builtin, memory.enabled true)
  status   what is stored: each store's entries and size against its limit
  off      turn memory off: the memory tool is not offered and nothing is injected
           (the entries are kept; setup turns it on again)

Options
  --profile <name>   the profile whose memory and config.yaml (default: the active profile)

Limits: memory.memory_char_limit and memory.user_char_limit (agent config set).`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  if (sub === undefined) throw new AgentError("usage.missing_subcommand", "agent memory needs a subcommand: setup, status or off");
  if (sub !== "setup" && sub !== "status" && sub !== "off")
    throw new AgentError("usage.unknown_command", `unknown subcommand "memory ${sub}"; see \`agent memory --help\``);
  if (args.length) throw new AgentError("usage.invalid", `agent memory ${sub} takes no arguments`);
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    const r = await client.call(`memory.${sub}`, cli.flags.profile ? { profile: cli.flags.profile } : {});
    printResult(r, json, (s) => render(s, sub));
    return EXIT.ok;
  } finally {
    client.close();
  }
}

function render(s: MemoryStatusResult, sub: string): string {
  const head =
    sub === "setup"
      ? `memory: built-in file store, on (${s.dir})`
      : sub === "off"
        ? "memory: off (the memory tool is not offered and nothing is injected; entries are kept; `agent memory setup` turns it on)"
        : `memory: ${s.enabled ? "on" : "off"}, provider ${s.provider}, profile ${s.profile} (${s.dir})`;
  const stores = s.stores.map((st) =>
    [
      `${st.name} (${st.file}): ${st.entries.length} entr${st.entries.length === 1 ? "y" : "ies"}, ${st.chars}/${st.limit} chars`,
      ...st.entries.map((e) => `  - ${e.replace(/\n/g, "\n    ")}`),
    ].join("\n"),
  );
  return [head, ...stores].join("\n");
}
