import { AgentError } from "../../shared/errors.js";
import type { ApiServerStatus } from "../../shared/protocol/api-server.js";
import { didYouMean, parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { table } from "../output.js";
import { printingCall } from "../with-daemon.js";

/** `agent api-server`: the daemon's OpenAI-compatible endpoint (docs/api-server.md). Each subcommand is one call. */
const SPEC = {
  usage: "agent api-server <start|stop|status> [--host <h>] [--port <n>]",
  description: "Serve this agent's profiles as models on an OpenAI-compatible endpoint (POST /v1/chat/completions, GET /v1/models).",
  flags: {
    host: { type: "string" },
    port: { type: "number" },
  },
  help: `Subcommands
  start     start it in the daemon (api_server.host and api_server.port unless given; 127.0.0.1:8642)
  stop      stop it; turns running through it are interrupted
  status    whether it runs, where, and the model ids it serves

It runs inside the daemon and keeps running after this command exits. Set
api_server.enabled: true in config.yaml to have the daemon start it. Bound to an address
other than loopback it needs API_SERVER_KEY (in $AGENT_HOME/.env), which callers send as
Authorization: Bearer <key>.

Examples
  $ agent api-server start
  $ agent api-server start --host 0.0.0.0 --port 8642     # needs API_SERVER_KEY
  $ agent api-server status --json`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = printingCall(env, json);
  if (args.length && ["start", "stop", "status"].includes(sub ?? ""))
    throw new AgentError("usage.invalid", `unexpected argument ${JSON.stringify(args[0])}; usage: ${SPEC.usage}`);
  if (sub !== "start" && (cli.flags.host !== undefined || cli.flags.port !== undefined))
    throw new AgentError("usage.invalid", "--host and --port go with agent api-server start");
  switch (sub) {
    case "start":
      return call(
        (c) =>
          c.call("api_server.start", {
            ...(cli.flags.host !== undefined ? { host: cli.flags.host } : {}),
            ...(cli.flags.port !== undefined ? { port: cli.flags.port } : {}),
          }),
        formatStatus,
      );
    case "stop":
      return call(
        (c) => c.call("api_server.stop", {}),
        (r) => (r.stopped ? "API server stopped" : "the API server was not running"),
      );
    case "status":
      return call((c) => c.call("api_server.status", {}), formatStatus);
    case undefined:
      throw new AgentError("usage.invalid", `a subcommand is needed; usage: ${SPEC.usage}`);
    default:
      throw new AgentError(
        "usage.unknown_command",
        `unknown subcommand "api-server ${sub}"${didYouMean(sub, ["start", "stop", "status"])}; subcommands: start, stop, status`,
      );
  }
}

function formatStatus(s: ApiServerStatus): string {
  const head = s.running
    ? `API server running at ${s.url} (started by ${s.started_by}; ${s.key_required ? "key required" : "no key: loopback only"}; ${s.active_requests} active)`
    : `API server not running${s.error ? `: ${s.error}` : ""} (agent api-server start)`;
  return [
    head,
    table(
      ["MODEL", "PROFILE"],
      s.models.map((m) => [m.id, m.profile]),
    ),
  ].join("\n");
}
