import { AgentError } from "../../shared/errors.js";
import { AUTH_DEVICE_TOPIC, type AuthDevicePrompt, type AuthStatusEntry } from "../../shared/protocol/auth.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";
import { printingCall, withDaemon } from "../with-daemon.js";

/** `agent auth`: provider sign-in (docs/auth.md). The daemon runs the flow and keeps the tokens. */
const SPEC = {
  usage: "agent auth <login|status|logout>",
  description: "Sign in to a model provider with OAuth (device code), see how each provider authenticates, sign out.",
  flags: {},
  help: `Subcommands
  login <provider>    device sign-in: prints a URL and a code, waits until you approve
  status [provider]   each provider's method (oauth, api_key, none), expiry and scopes; never a token
  logout <provider>   forget the provider's sign-in (its API key, if any, is used again)

A provider signs in when config.yaml names its issuer:
  providers:
    acme:
      base_url: https://api.acme.example/v1
      model: acme-large
      oauth_issuer: https://login.acme.example
      oauth_client_id: agent-cli

Examples
  $ agent auth login acme
  $ agent auth status --json`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  switch (sub) {
    case "login": {
      expectArgs(args, 1, 1, "agent auth login <provider>");
      const provider = args[0]!;
      return withDaemon(env, async (client) => {
        const stop = new AbortController();
        const onSigint = () => stop.abort();
        process.once("SIGINT", onSigint);
        const off = client.onEvent((event) => {
          if (event.topic !== AUTH_DEVICE_TOPIC) return;
          const p = event.data as AuthDevicePrompt;
          // The issuer's text is untrusted: no terminal escapes reach the screen.
          const lines = [
            `To sign in to ${provider}, open ${terminalText(p.verification_uri)}`,
            `and enter the code ${terminalText(p.user_code)}`,
            ...(p.verification_uri_complete ? [`(or open ${terminalText(p.verification_uri_complete)})`] : []),
            `Waiting for approval (the code expires in ${Math.round(p.expires_in / 60)} min; Ctrl-C cancels)...`,
          ];
          (json ? process.stderr : process.stdout).write(`${lines.join("\n")}\n`);
        });
        try {
          const r = await client.call("auth.login", { provider }, stop.signal);
          printResult(r, json, (x) => `signed in to ${provider}${x.status.expires_at ? `; token expires ${x.status.expires_at}` : ""}; stored in ${x.file}`);
          return EXIT.ok;
        } finally {
          off();
          process.off("SIGINT", onSigint);
        }
      });
    }
    case "status":
      expectArgs(args, 0, 1, "agent auth status [provider]");
      return printingCall(env, json)(
        (c) => c.call("auth.status", args[0] ? { provider: args[0] } : {}),
        (r) => (r.providers.length ? table(["PROVIDER", "METHOD", "EXPIRES", "SCOPES"], r.providers.map(row)) : "no providers are configured"),
      );
    case "logout":
      expectArgs(args, 1, 1, "agent auth logout <provider>");
      return printingCall(env, json)(
        (c) => c.call("auth.logout", { provider: args[0]! }),
        (r) => (r.removed ? `signed out of ${r.provider}` : `${r.provider} had no sign-in`),
      );
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent auth needs a subcommand: login, status or logout");
    default:
      throw new AgentError("usage.unknown_command", `unknown subcommand "auth ${sub}"; see \`agent auth --help\``);
  }
}

function row(s: AuthStatusEntry): string[] {
  const method = s.method === "api_key" ? `api_key (${s.api_key_env})` : s.method;
  const expires =
    s.method !== "oauth"
      ? "-"
      : s.expires_at
        ? `${s.expires_at}${s.expired ? (s.refreshable ? " (expired; refreshed on next call)" : " (expired)") : ""}`
        : "never";
  return [s.provider, method, expires, s.scopes.join(" ") || "-"];
}

function expectArgs(args: string[], min: number, max: number, usage: string): void {
  if (args.length < min || args.length > max) throw new AgentError("usage.invalid", `wrong number of arguments; usage: ${usage}`);
}
