import { AgentError } from "../../shared/errors.js";
import { didYouMean, parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { printingCall } from "../with-daemon.js";

const SPEC = {
  usage: "agent debug share [--upload]",
  description: "Diagnostics: write one redacted bundle to attach to a bug report.",
  flags: {
    upload: { type: "boolean" },
  },
  help: `Subcommands
  share       write a redacted diagnostics bundle (JSON, 0600) under $AGENT_HOME/debug/ and print its path:
              the versions of the app, Node and the OS; the config without its secrets (.env: names
              only); the daemon status; recent logs per component, scrubbed; the LSP and MCP server
              states; the kanban dispatcher state; cron's next fires; the channel states.
              Never .env, auth.json or session contents.

Options
  --upload    also POST it to debug.share_url (\`agent config set debug.share_url https://…\`)
              and print the URL the server answers with`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...extra] = cli.input;
  if (sub === undefined) throw new AgentError("usage.missing_subcommand", "agent debug needs a subcommand: share; see `agent debug --help`");
  if (sub !== "share")
    throw new AgentError("usage.unknown_command", `unknown subcommand "debug ${sub}"${didYouMean(sub, ["share"])}; see \`agent debug --help\``);
  if (extra.length) throw new AgentError("usage.invalid", `agent debug share takes no arguments (got ${extra.join(" ")}); usage: ${SPEC.usage}`);
  return printingCall(env, Boolean(cli.flags.json))(
    (client) => client.call("debug.share", cli.flags.upload ? { upload: true } : {}),
    (r) =>
      [
        `debug bundle written: ${r.path} (${(r.bytes / 1024).toFixed(1)} KiB)`,
        ...r.problems.map((p) => `  ${p.section}: not gathered (${p.error})`),
        ...(r.uploaded_url ? [`uploaded: ${r.uploaded_url}`] : []),
      ].join("\n"),
  );
}
