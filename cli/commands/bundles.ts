import { AgentError } from "../../shared/errors.js";
import type { BundleInfo } from "../../shared/protocol/skills.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { withDaemon } from "../with-daemon.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

const SPEC = {
  usage: "agent bundles <list|show|create|delete|reload>",
  description: "Skill bundles: $AGENT_HOME/skill-bundles/<slug>.yaml, several skills loaded together by /<slug> in the chat.",
  flags: {
    skill: { type: "string", isMultiple: true },
    description: { type: "string" },
    instruction: { type: "string" },
    force: { type: "boolean" },
    profile: { type: "string" },
  },
  help: `Subcommands
  list                      the bundles (and bundle files skipped as invalid)
  show <bundle>             a bundle and which of its skills the profile has
  create <name> --skill <s> [--skill <s>...] [--description <text>] [--instruction <text>] [--force]
                            write skill-bundles/<slug>.yaml (--force replaces an existing one)
  delete <bundle>           remove the bundle's file
  reload                    rescan the folder (it is also watched)

Options
  --profile <name>          check skills against this profile (default: the home's own)

Examples
  $ agent bundles create "Web review" --skill code-review --skill accessibility --instruction "Review the diff."
  $ agent bundles show web-review`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const profile = cli.flags.profile ? { profile: cli.flags.profile } : {};
  const expect = (n: number, usage: string) => {
    if (args.length !== n)
      throw new AgentError("usage.invalid", `${usage} takes ${n === 0 ? "no arguments" : n === 1 ? "one argument" : `${n} arguments`}; usage: ${usage}`);
  };
  switch (sub) {
    case "list":
    case "reload":
      expect(0, `agent bundles ${sub}`);
      return withDaemon(env, async (client) => {
        const r = sub === "list" ? await client.call("bundles.list", {}) : await client.call("bundles.reload", {});
        printResult(r, json, () =>
          [
            r.bundles.length
              ? table(
                  ["BUNDLE", "SKILLS", "DESCRIPTION"],
                  r.bundles.map((b) => [b.slug, b.skills.join(", "), b.description]),
                )
              : `no bundles in ${r.dir}`,
            ...r.warnings.map((w) => `warning: skipped ${w}`),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    case "show":
      expect(1, "agent bundles show <bundle>");
      return withDaemon(env, async (client) => {
        const r = await client.call("bundles.show", { name: args[0]!, ...profile });
        printResult(r, json, () =>
          [
            ...describe(r.bundle),
            "skills:",
            ...r.skills.map((s) => `  ${s.name}${s.found ? "" : `  (not installed in profile ${r.profile}: skipped when loaded)`}`),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    case "create":
      expect(1, "agent bundles create <name> --skill <s>...");
      if (!cli.flags.skill?.length) throw new AgentError("usage.invalid", "agent bundles create needs at least one --skill <name>");
      return withDaemon(env, async (client) => {
        const r = await client.call("bundles.create", {
          name: args[0]!,
          skills: cli.flags.skill!,
          ...(cli.flags.description !== undefined ? { description: cli.flags.description } : {}),
          ...(cli.flags.instruction !== undefined ? { instruction: cli.flags.instruction } : {}),
          ...(cli.flags.force ? { force: true } : {}),
          ...profile,
        });
        printResult(r, json, () =>
          [
            `${r.replaced ? "replaced" : "created"} bundle ${r.bundle.slug} (${r.bundle.file}); load it with /${r.bundle.slug}`,
            ...(r.missing.length ? [`note: not installed (skipped when loaded until they are): ${r.missing.join(", ")}`] : []),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    case "delete":
      expect(1, "agent bundles delete <bundle>");
      return withDaemon(env, async (client) => {
        const r = await client.call("bundles.delete", { name: args[0]! });
        printResult(r, json, () => `deleted bundle ${r.deleted} (${r.file})`);
        return EXIT.ok;
      });
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent bundles needs a subcommand: list, show, create, delete or reload");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "bundles ${sub}"; see \`agent bundles --help\``);
  }
}

function describe(b: BundleInfo): string[] {
  return [
    `${b.slug}: ${b.name}`,
    ...(b.description ? [`description: ${b.description}`] : []),
    ...(b.instruction ? [`instruction: ${b.instruction}`] : []),
    `file: ${b.file}`,
  ];
}
