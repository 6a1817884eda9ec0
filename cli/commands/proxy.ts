import { AgentError } from "../../shared/errors.js";
import type { ProxyStatus } from "../../shared/protocol/proxy.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { table } from "../output.js";
import { printingCall } from "../with-daemon.js";

/** `agent proxy`: the local OpenAI-compatible proxy the daemon owns (docs/proxy.md). */
const SPEC = {
  usage: "agent proxy <start|stop|status|providers>",
  description: "A local OpenAI-compatible endpoint that forwards to a configured provider with its credential attached.",
  flags: {
    provider: { type: "string" },
    host: { type: "string" },
    port: { type: "number" },
  },
  help: `Subcommands
  start [--provider NAME] [--host H] [--port N]   start (or restart) the proxy; default 127.0.0.1:8645
  stop                                            stop it
  status                                          address, provider, upstream, requests served
  providers                                       the providers it can forward to and how each authenticates

Forwarded paths: /v1/chat/completions, /v1/completions, /v1/embeddings, /v1/models.
A non-loopback --host needs proxy.token (AGENT_PROXY_TOKEN in .env); callers send it as their bearer.

Examples
  $ agent proxy start --provider acme
  $ OPENAI_BASE_URL=http://127.0.0.1:8645/v1 OPENAI_API_KEY=unused python my_script.py`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = printingCall(env, json);
  if (args.length) throw new AgentError("usage.invalid", `agent proxy ${sub} takes no arguments`);
  switch (sub) {
    case "start": {
      const port = cli.flags.port as number | undefined;
      if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535))
        throw new AgentError("usage.invalid", "--port must be an integer 0-65535");
      const params: { provider?: string; host?: string; port?: number } = {};
      if (cli.flags.provider) params.provider = String(cli.flags.provider);
      if (cli.flags.host) params.host = String(cli.flags.host);
      if (port !== undefined) params.port = port;
      return call((c) => c.call("proxy.start", params), formatStatus);
    }
    case "stop":
      return call(
        (c) => c.call("proxy.stop", {}),
        (r) => (r.stopped ? "proxy stopped" : "the proxy was not running"),
      );
    case "status":
      return call((c) => c.call("proxy.status", {}), formatStatus);
    case "providers":
      return call(
        (c) => c.call("proxy.providers", {}),
        (r) =>
          table(
            ["PROVIDER", "AUTH", "BASE URL", "DEFAULT"],
            r.providers.map((p) => [p.name, p.method, p.base_url, p.default ? "yes" : ""]),
          ),
      );
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent proxy needs a subcommand: start, stop, status or providers");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "proxy ${sub}"; see \`agent proxy --help\``);
  }
}

function formatStatus(s: ProxyStatus): string {
  if (!s.running) return "proxy not running (agent proxy start)";
  return [
    `proxy listening on ${s.url}`,
    `provider ${s.provider ?? "(unresolved)"} -> ${s.upstream ?? "(unresolved: see agent proxy providers)"} (auth: ${s.method ?? "unknown"})`,
    `caller key ${s.key_required ? "required (proxy.token)" : "not required (loopback)"}; ${s.requests} request${s.requests === 1 ? "" : "s"} since ${s.started_at}`,
  ].join("\n");
}
