import { connectDaemon } from "../../shared/client/index.js";
import { AgentError } from "../../shared/errors.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

const SPEC = {
  usage: "agent approvals <list|revoke|pending|answer>",
  description: 'Approvals of risky tool calls: what this profile remembers ("always"), and questions waiting for an answer.',
  flags: {
    all: { type: "boolean" },
    reason: { type: "string" },
  },
  help: `Subcommands
  list                      the remembered ("always") approvals of the profile
  revoke <key> | --all      forget one (by its KEY from list) or every one
  pending                   questions waiting for an answer now
  answer <id> <once|session|always|deny> [--reason <text>]
                            answer a waiting question (the reason goes to the model with a denial)

Use the global --profile <name> for another profile's. See docs/approvals.md.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  if (sub === undefined) throw new AgentError("usage.missing_subcommand", "agent approvals needs a subcommand: list, revoke, pending or answer");
  if (!["list", "revoke", "pending", "answer"].includes(sub))
    throw new AgentError("usage.unknown_command", `unknown subcommand "approvals ${sub}"; see \`agent approvals --help\``);
  if ((sub === "list" || sub === "pending") && args.length) throw new AgentError("usage.invalid", `agent approvals ${sub} takes no arguments`);
  if (sub === "revoke" && (cli.flags.all ? args.length !== 0 : args.length !== 1))
    throw new AgentError("usage.invalid", "agent approvals revoke takes one KEY (from agent approvals list) or --all");
  const choices = ["once", "session", "always", "deny"] as const;
  const choice = choices.find((c) => c === args[1]);
  if (sub === "answer" && (args.length !== 2 || !choice))
    throw new AgentError("usage.invalid", "usage: agent approvals answer <id> <once|session|always|deny> [--reason <text>]");
  if (cli.flags.reason !== undefined && (sub !== "answer" || choice !== "deny")) throw new AgentError("usage.invalid", "--reason goes with answer … deny");
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    if (sub === "list") {
      const r = await client.call("approvals.list", {});
      printResult(r, json, (x) =>
        x.approvals.length
          ? table(
              ["KEY", "SINCE"],
              x.approvals.map((a) => [oneLine(a.key), new Date(a.createdAt).toISOString().slice(0, 16).replace("T", " ")]),
            )
          : `no remembered approvals in profile ${x.profile}`,
      );
    } else if (sub === "revoke") {
      const r = await client.call("approvals.revoke", cli.flags.all ? { all: true } : { key: args[0]! });
      printResult(r, json, (x) =>
        x.removed.length ? `forgot ${x.removed.length} approval${x.removed.length === 1 ? "" : "s"} of profile ${x.profile}` : `profile ${x.profile} had none`,
      );
    } else if (sub === "pending") {
      const r = await client.call("approvals.pending", {});
      printResult(r, json, (x) =>
        x.approvals.length
          ? table(
              ["ID", "SESSION", "WHY", "WHAT"],
              x.approvals.map((a) => [a.id, a.sessionId, oneLine(a.why), oneLine(a.summary).slice(0, 80)]),
            )
          : "no approval questions waiting",
      );
    } else {
      const r = await client.call("approvals.answer", { id: args[0]!, choice: choice!, ...(cli.flags.reason ? { reason: cli.flags.reason } : {}) });
      printResult(r, json, (x) => (x.allowed ? `approved (${choice})` : "denied"));
    }
    return EXIT.ok;
  } finally {
    client.close();
  }
}

/** Model text in a table cell: escapes removed, and newlines shown (a command's second line must not pass for another row). */
function oneLine(text: string): string {
  return terminalText(text).replace(/\n/g, " ⏎ ").replace(/\t/g, " ");
}
