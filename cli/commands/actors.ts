import { AgentError } from "../../shared/errors.js";
import type { ActorRecordView, CrashPolicy } from "../../shared/protocol/actors.js";
import { parseCommand } from "../args.js";
import { connectDaemon } from "../../shared/client/index.js";
import type { CliEnv } from "../command.js";
import { formatDuration, printResult, table } from "../output.js";

const SPEC = {
  usage: "agent actors <list|get|create|call|state|destroy|logs|new>",
  description: "Create, call and inspect the daemon's actors (user modules live in $AGENT_HOME/actors/).",
  flags: {
    name: { type: "string" },
    key: { type: "string" },
    input: { type: "string" },
    workflow: { type: "boolean" },
    limit: { type: "number" },
    crashPolicy: { type: "string" },
  },
  help: `Subcommands
  list [--name n]                  live actors (newest first) and user modules that failed to load
  get <id>                         one actor's record
  create <name> [--key k] [--input json] [--crash-policy restart|sleep|destroy]
  call <id> <action> [json args...]  run an action; each argument is parsed as JSON (else a string)
  state <id>                       the actor's state
  destroy <id>                     destroy an actor (runs onDestroy, removes its files); built-in actors
                                   (board, cron, session) are refused: their feature's commands own them
  logs <id> [--limit n]            what the actor wrote with c.log
  new <name> [--workflow]          write an example module to $AGENT_HOME/actors/<name>.mjs`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...rest] = cli.input;
  const json = Boolean(cli.flags.json);
  if (sub === undefined)
    throw new AgentError("usage.missing_subcommand", "agent actors needs a subcommand: list, get, create, call, state, destroy, logs or new");
  const need = (n: number, what: string) => {
    if (rest.length < n) throw new AgentError("usage.invalid", `agent actors ${sub} needs ${what}; see \`agent actors --help\``);
  };
  const known = ["list", "get", "create", "call", "state", "destroy", "logs", "new"];
  if (!known.includes(sub)) throw new AgentError("usage.unknown_command", `unknown subcommand "actors ${sub}"; see \`agent actors --help\``);
  const policy = cli.flags.crashPolicy;
  if (policy !== undefined && !isCrashPolicy(policy)) {
    throw new AgentError(
      "usage.invalid",
      `unknown --crash-policy ${JSON.stringify(policy)}: crash_policy must be one of ${Object.keys(CRASH_POLICIES).join(", ")}`,
    );
  }
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    switch (sub) {
      case "list": {
        const r = await client.call("actors.list", { ...(cli.flags.name ? { name: cli.flags.name } : {}) });
        printResult(r, json, (d) => {
          const out: string[] = [];
          if (d.actors.length === 0)
            out.push(`no actors${cli.flags.name ? ` named ${cli.flags.name}` : ""} (definitions: ${d.definitions.join(", ") || "none"})`);
          else
            out.push(
              table(
                ["ID", "NAME", "KEY", "STATE", "CREATED"],
                d.actors.map((a) => [a.actor_id, a.name, a.key, a.builtin ? `${a.state} (built-in)` : a.state, ago(a.create_ts)]),
              ),
            );
          const bad = d.modules.filter((m) => !m.ok);
          if (bad.length) {
            out.push("", "module errors:");
            for (const m of bad) out.push(`  ${m.file}: ${m.error}`);
          }
          return out.join("\n");
        });
        return 0;
      }
      case "get": {
        need(1, "an actor id");
        printResult(await client.call("actors.get", { actorId: rest[0]! }), json, describe);
        return 0;
      }
      case "create": {
        need(1, "an actor name");
        let input: unknown;
        if (cli.flags.input !== undefined) {
          try {
            input = JSON.parse(cli.flags.input);
          } catch {
            throw new AgentError("usage.invalid", "--input must be JSON");
          }
        }
        const rec = await client.call("actors.create", {
          name: rest[0]!,
          ...(cli.flags.key !== undefined ? { key: cli.flags.key } : {}),
          ...(input !== undefined ? { input } : {}),
          ...(policy ? { crash_policy: policy } : {}),
        });
        printResult(rec, json, (r) => r.actor_id);
        return 0;
      }
      case "call": {
        need(2, "an actor id and an action name");
        const args = rest.slice(2).map(parseArg);
        const r = await client.call("actors.call", { actorId: rest[0]!, action: rest[1]!, args });
        printResult(r, json, (d) => show(d.output));
        return 0;
      }
      case "state": {
        need(1, "an actor id");
        const r = await client.call("actors.state", { actorId: rest[0]! });
        printResult(r, json, (d) => show(d.state));
        return 0;
      }
      case "destroy": {
        need(1, "an actor id");
        const r = await client.call("actors.destroy", { actorId: rest[0]! });
        printResult(r, json, (d) => `destroyed ${d.actor_id}`);
        return 0;
      }
      case "logs": {
        need(1, "an actor id");
        const r = await client.call("actors.logs", { actorId: rest[0]!, ...(cli.flags.limit !== undefined ? { limit: cli.flags.limit } : {}) });
        printResult(r, json, (d) =>
          d.lines.length === 0
            ? "no log lines (c.log) since the daemon started"
            : d.lines.map((l) => `${new Date(l.ts).toISOString()} ${l.level.padEnd(5)} ${l.msg}${l.fields ? " " + JSON.stringify(l.fields) : ""}`).join("\n"),
        );
        return 0;
      }
      case "new": {
        need(1, "a name for the actor");
        const r = await client.call("actors.new", { name: rest[0]!, workflow: Boolean(cli.flags.workflow) });
        printResult(r, json, (d) => `wrote ${d.file}\ntry: agent actors create ${d.name} --key demo`);
        return 0;
      }
    }
    return 0;
  } finally {
    client.close();
  }
}

// Typed against the protocol's CrashPolicy, so a new policy fails the build here (the CLI does not load zod).
const CRASH_POLICIES: Record<CrashPolicy, true> = { restart: true, sleep: true, destroy: true };
function isCrashPolicy(value: string): value is CrashPolicy {
  return Object.hasOwn(CRASH_POLICIES, value);
}

/** A CLI argument as JSON when it parses, else as a plain string. */
function parseArg(a: string): unknown {
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}

function show(v: unknown): string {
  return v === undefined ? "" : typeof v === "string" ? v : JSON.stringify(v, null, 2);
}

function ago(ts: number): string {
  return `${formatDuration(Math.max(0, Date.now() - ts))} ago`;
}

function describe(a: ActorRecordView): string {
  const t = (v: number | null) => (v === null ? "-" : new Date(v).toISOString());
  return [
    `${a.actor_id}  ${a.name}  (${a.state}${a.builtin ? ", built-in" : ""})`,
    `  key            ${a.key}`,
    `  namespace      ${a.namespace_id}`,
    `  crash policy   ${a.crash_policy}`,
    `  created        ${t(a.create_ts)}`,
    `  started        ${t(a.start_ts)}`,
    `  connectable    ${t(a.connectable_ts)}`,
    `  sleeping since ${t(a.sleep_ts)}`,
    ...(a.error ? [`  error          ${JSON.stringify(a.error)}`] : []),
  ].join("\n");
}
