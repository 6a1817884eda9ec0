import { createInterface } from "node:readline";
import { terminalText } from "../../shared/terminal-text.js";
import { AgentError } from "../../shared/errors.js";
import type { DistributionInfo, InstallPreview, UpdatePreview } from "../../shared/protocol/profiles.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { withDaemon } from "../with-daemon.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

const SPEC = {
  hiddenSubcommands: ["ls", "rm"],
  usage: "agent profile <list|show|info|create|rename|delete|use|describe|install|update>",
  description: "Profiles: folders layered over the home, each with its own config, .env, SOUL.md, skills and sessions.",
  flags: {
    description: { type: "string" },
    alias: { type: "boolean" },
    cloneFrom: { type: "string" },
    cloneAll: { type: "boolean" },
    yes: { type: "boolean", shortFlag: "y" },
    text: { type: "string" },
    auto: { type: "boolean" },
    all: { type: "boolean" },
    overwrite: { type: "boolean" },
    name: { type: "string" },
    force: { type: "boolean" },
    forceConfig: { type: "boolean" },
  },
  help: `Subcommands
  list                      every profile, with its description and distribution
  show [name]               a profile (default: the one you run as)
  info <name>               a profile in detail (paths, model, skills)
  create <name> [--description <text>] [--no-alias] [--clone-from <p>] [--clone-all]
                            --clone-from copies config.yaml, .env, SOUL.md and skills/;
                            --clone-all everything but sessions, logs and state
  rename <old> <new>        also moves its alias
  delete <name> [-y] [--force]
                            shows what goes, then asks (-y: no question); refused while
                            cron jobs added to it exist, unless --force (removes them)
  use <name>                the profile commands run as when no --profile is given
  describe [name] --text <text> | --auto [--all] [--overwrite]
                            --auto has the model write it; a description you wrote is
                            kept unless --overwrite
  install <git URL|dir> [--name <n>] [--alias] [--force] [-y]
  update <name> [--force-config] [-y]

Every command takes -p/--profile <name> (or AGENT_PROFILE) to run as that profile.
An alias is ~/.local/bin/<name>, running \`agent --profile <name>\`.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const f = cli.flags;
  const json = Boolean(f.json);
  const want = (n: number, usage: string) => {
    if (args.length !== n) throw new AgentError("usage.invalid", `usage: ${usage}`);
  };
  switch (sub) {
    case "list":
    case "ls":
      want(0, "agent profile list");
      return withDaemon(env, async (c) => {
        const r = await c.call("profile.list", {});
        printResult(
          r,
          json,
          () =>
            table(
              ["", "NAME", "DESCRIPTION", "DISTRIBUTION", "ALIAS"],
              r.profiles.map((p) => [p.name === r.current ? "*" : p.active ? "+" : "", p.name, p.description ?? "-", dist(p.distribution), p.alias ?? "-"]),
            ) + `\n(* running as, + active)`,
        );
        return EXIT.ok;
      });
    case "show":
    case "info": {
      if (sub === "info") want(1, "agent profile info <name>");
      else if (args.length > 1) throw new AgentError("usage.invalid", "usage: agent profile show [name]");
      return withDaemon(env, async (c) => {
        const p = await c.call("profile.show", args[0] ? { name: args[0] } : {});
        printResult(p, json, () =>
          [
            `${p.name}${p.active ? " (active)" : ""}`,
            `  description:  ${p.description ?? "-"}${p.description_auto ? " (auto)" : ""}`,
            `  distribution: ${dist(p.distribution)}${p.distribution?.source ? ` from ${p.distribution.source}` : ""}`,
            `  model:        ${p.model.model ? `${p.model.provider} ${p.model.model}` : `none (${p.model.problem})`}`,
            `  folder:       ${p.dir}`,
            ...(sub === "info"
              ? [
                  `  SOUL.md:      ${p.hasSoul ? p.paths.soul : "-"}`,
                  `  skills:       ${p.skills.length ? p.skills.join(", ") : "-"}`,
                  ...p.failedSkills.map((f) => `  FAILED skill: ${terminalText(`${f.path}: ${f.reason}`)}`),
                  `  config:       ${p.paths.config}`,
                  `  .env:         ${p.paths.env}`,
                  `  memories:     ${p.paths.memories}`,
                  `  alias:        ${p.alias ?? "-"}`,
                  ...(p.distribution?.installed_at ? [`  installed at: ${p.distribution.installed_at}`] : []),
                ]
              : []),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    }
    case "create":
      want(1, "agent profile create <name> [--description <text>] [--no-alias] [--clone-from <p>] [--clone-all]");
      return withDaemon(env, async (c) => {
        const r = await c.call("profile.create", {
          name: args[0]!,
          ...(f.description !== undefined ? { description: f.description } : {}),
          ...(f.alias === false ? { alias: false } : {}),
          ...(f.cloneFrom !== undefined ? { cloneFrom: f.cloneFrom } : {}),
          ...(f.cloneAll ? { cloneAll: true } : {}),
        });
        printResult(r, json, () =>
          [
            `created profile ${r.name} in ${r.dir}`,
            ...(r.cloned.length ? [`  copied: ${r.cloned.join(", ")}`] : []),
            ...(r.alias ? [`  alias: ${r.alias}`] : []),
            ...(r.note ? [`  note: ${r.note}`] : []),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    case "rename":
      want(2, "agent profile rename <old> <new>");
      return withDaemon(env, async (c) => {
        const r = await c.call("profile.rename", { from: args[0]!, to: args[1]! });
        printResult(r, json, () => `renamed profile ${r.from} to ${r.name}${r.alias ? ` (alias ${r.alias})` : ""}`);
        return EXIT.ok;
      });
    case "delete":
    case "rm":
      want(1, "agent profile delete <name> [-y] [--force]");
      return withDaemon(env, async (c) => {
        const p = await c.call("profile.delete.preview", { name: args[0]! });
        const jobs = p.cronJobs.map((j) => `${j.id} (${terminalText(j.name)}, ${terminalText(j.schedule)})`);
        // Refused before the question: the daemon would refuse it too.
        if (jobs.length && !f.force)
          throw new AgentError(
            "profile.in_use",
            `profile ${p.name} has cron job(s) ${jobs.join(", ")}; remove them first (\`agent -p ${p.name} cron remove <id>\`) or delete with --force, which removes them with their runs`,
          );
        if (!json) {
          process.stderr.write(
            [
              `This deletes profile ${p.name} and everything in ${p.dir} (its memories, skills, .env).`,
              ...(p.distribution ? [`  distribution: ${p.distribution.name} ${p.distribution.version} from ${p.distribution.source ?? "?"}`] : []),
              ...(p.alias ? [`  alias: ${p.alias}`] : []),
              ...(jobs.length ? [`  cron jobs removed with their runs: ${jobs.join(", ")}`] : []),
              ...(p.sessions
                ? [`  its ${p.sessions} session(s) stay, with their history, under the deleted profile's name (agent sessions list --all-profiles)`]
                : []),
              "",
            ].join("\n"),
          );
        }
        if (!(await confirm(`Delete profile ${p.name}?`, Boolean(f.yes)))) return EXIT.failure;
        const r = await c.call("profile.delete.apply", { name: p.name, ...(f.force ? { force: true } : {}) });
        printResult(r, json, () =>
          [
            `deleted profile ${r.deleted}${r.aliasRemoved ? " and its alias" : ""}`,
            ...(r.cronJobsRemoved.length ? [`removed cron job(s) ${r.cronJobsRemoved.join(", ")}`] : []),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    case "use":
      want(1, "agent profile use <name>");
      return withDaemon(env, async (c) => {
        const r = await c.call("profile.use", { name: args[0]! });
        printResult(r, json, () => `commands now run as profile ${r.active} (override with --profile)`);
        return EXIT.ok;
      });
    case "describe":
      if (args.length > 1) throw new AgentError("usage.invalid", "usage: agent profile describe [name] --text <text> | --auto [--all] [--overwrite]");
      return withDaemon(env, async (c) => {
        const r = await c.call("profile.describe", {
          ...(args[0] ? { name: args[0] } : {}),
          ...(f.text !== undefined ? { text: f.text } : {}),
          ...(f.auto ? { auto: true } : {}),
          ...(f.all ? { all: true } : {}),
          ...(f.overwrite ? { overwrite: true } : {}),
        });
        printResult(r, json, () =>
          r.results.map((x) => `${x.name}: ${x.description ?? "-"}${x.description_auto ? " (auto)" : ""}${x.note ? `\n  ${x.note}` : ""}`).join("\n"),
        );
        return EXIT.ok;
      });
    case "install": {
      want(1, "agent profile install <git URL|directory> [--name <n>] [--alias] [--force] [-y]");
      const params = {
        source: args[0]!,
        cwd: process.cwd(),
        ...(f.name !== undefined ? { name: f.name } : {}),
        ...(f.alias ? { alias: true } : {}),
        ...(f.force ? { force: true } : {}),
      };
      return withDaemon(env, async (c) => {
        const p = await c.call("profile.install.preview", params);
        if (!json) process.stderr.write(terminalText(installPreviewText(p)));
        if (!(await confirm(`Install ${p.manifest.name} ${p.manifest.version} as profile ${p.name}?`, Boolean(f.yes)))) return EXIT.failure;
        const r = await c.call("profile.install.apply", { ...params, confirmedReach: p.reachDigest });
        printResult(r, json, () =>
          [
            `installed ${r.manifest.name} ${r.manifest.version} as profile ${r.name} (${r.dir}) at ${r.installed_at}`,
            ...(r.alias ? [`  alias: ${r.alias}`] : []),
            ...mcpOff(r.name, r.mcpServersOff),
            ...missingEnv(r),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    }
    case "update":
      want(1, "agent profile update <name> [--force-config] [-y]");
      return withDaemon(env, async (c) => {
        const params = { name: args[0]!, ...(f.forceConfig ? { forceConfig: true } : {}) };
        const p = await c.call("profile.update.preview", params);
        if (!json) process.stderr.write(terminalText(updatePreviewText(p)));
        if (!(await confirm(`Update profile ${p.name}?`, Boolean(f.yes)))) return EXIT.failure;
        const r = await c.call("profile.update.apply", { ...params, confirmedReach: p.reachDigest });
        printResult(r, json, () => [`updated profile ${r.name} from ${r.from} to ${r.to} at ${r.installed_at}`, ...mcpOff(r.name, r.mcpServersOff)].join("\n"));
        return EXIT.ok;
      });
    case undefined:
      throw new AgentError(
        "usage.missing_subcommand",
        "agent profile needs a subcommand: list, show, info, create, rename, delete, use, describe, install or update",
      );
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "profile ${sub}"; see \`agent profile --help\``);
  }
}

function dist(d: DistributionInfo | null): string {
  return d ? `${d.name}@${d.version}` : "-";
}

function installPreviewText(p: InstallPreview): string {
  const m = p.manifest;
  return [
    `Distribution ${m.name} ${m.version}${m.author ? ` by ${m.author}` : ""} (${p.kind}: ${p.source})`,
    ...(m.description ? [`  ${m.description}`] : []),
    `  installs as profile: ${p.name}${p.exists ? " (exists: installing over it; your memories, sessions and .env stay)" : ""}`,
    ...(m.agent_requires ? [`  requires agent: ${m.agent_requires}`] : []),
    `  files: ${p.files.length}${p.cronJobs ? `, cron job files: ${p.cronJobs} (installed disabled)` : ""}`,
    ...(p.env.length ? ["  environment:", ...p.env.map((e) => `    ${e.name.padEnd(24)} ${e.status}${e.description ? `  (${e.description})` : ""}`)] : []),
    ...reachText(p.endpoints, p.keys),
    ...(p.configEnv.length
      ? ["  environment variables its config reads:", ...p.configEnv.map((e) => `    ${e.name.padEnd(24)} ${e.status}  (${e.file}: ${e.path})`)]
      : []),
    ...(p.keys.length ? ["  confirming sends these keys to these endpoints"] : []),
    "",
  ].join("\n");
}

/** Every endpoint a distribution's config points at, and which key goes where. */
function reachText(endpoints: InstallPreview["endpoints"], keys: InstallPreview["keys"], fresh?: InstallPreview["keys"]): string[] {
  return [
    ...(endpoints.length ? ["  endpoints its config points at:", ...endpoints.map((e) => `    ${e.url}  (${e.file}: ${e.path})`)] : []),
    ...(keys.length
      ? [
          "  API keys it would send:",
          ...keys.map(
            (k) =>
              `    ${k.env.map((v) => `$${v}`).join(", else ")} -> ${k.endpoint}  (provider ${k.provider})${fresh?.some((n) => n.endpoint === k.endpoint && n.provider === k.provider) ? "  NEW: not confirmed before" : ""}`,
          ),
        ]
      : []),
  ];
}

function missingEnv(p: InstallPreview): string[] {
  const missing = p.env.filter((e) => e.status === "needs setting");
  return missing.length ? [`  set in the profile's .env: ${missing.map((e) => e.name).join(", ")}`] : [];
}

function updatePreviewText(p: UpdatePreview): string {
  return [
    `Update profile ${p.name} from ${p.source}: ${p.from} → ${p.to}`,
    `  replaces: ${p.replaced.join(", ")}${p.configReplaced ? ", config.yaml" : ""}`,
    `  keeps: memories, sessions, .env, auth.json, state.db, logs, workspace${p.configReplaced ? "" : ", config.yaml"}`,
    ...reachText(p.endpoints, p.keys, p.newKeys),
    ...(p.newKeys.length ? ["  confirming sends the keys marked NEW to those endpoints"] : []),
    "",
  ].join("\n");
}

/**
 * Ask before a change; `-y` skips the question. Without a terminal to ask on, the change is
 * refused rather than made silently.
 */
async function confirm(question: string, yes: boolean): Promise<boolean> {
  if (yes) return true;
  if (!process.stdin.isTTY)
    throw new AgentError("profile.confirmation_required", `${question} Nothing was changed: confirm with -y when not running in a terminal`);
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => rl.question(`${question} [y/N] `, resolve));
    const ok = /^y(es)?$/i.test(answer.trim());
    if (!ok) process.stderr.write("cancelled; nothing was changed\n");
    return ok;
  } finally {
    rl.close();
  }
}

/** The distribution's MCP servers that were installed off, and how to turn one on. */
function mcpOff(profile: string, names: string[] | undefined): string[] {
  if (!names?.length) return [];
  return [`  MCP servers, off until you enable them: ${names.join(", ")} (agent -p ${profile} mcp enable <server>)`];
}
