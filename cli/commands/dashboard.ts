import { spawn } from "node:child_process";
import { AgentError } from "../../shared/errors.js";
import type { DashboardOpen } from "../../shared/protocol/dashboard.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { printingCall } from "../with-daemon.js";

/** `agent dashboard`: serve the web dashboard from the daemon, print a sign-in link, open it (docs/dashboard.md). */
const SPEC = {
  usage: "agent dashboard [--port <n>] [--no-open]",
  description: "Serve the web dashboard from the daemon and open it in the browser with a one-time sign-in link.",
  flags: {
    port: { type: "number" },
    open: { type: "boolean" },
  },
  help: `Options
  --port N     serve it on a port of its own (default: the gateway's, under /dashboard/)
  --no-open    print the link only; do not start a browser
  --json       {"url", "sign_in_url", "expires_at", "token_required", "open_file"}

The link signs in once, within 5 minutes; run the command again for a new one.
On a non-loopback gateway.host, signing in also asks for the gateway token.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length) throw new AgentError("usage.invalid", `agent dashboard takes no arguments (got ${cli.input.join(" ")})`);
  const port = cli.flags.port as number | undefined;
  if (port !== undefined && (!Number.isInteger(port) || port < 0 || port > 65535)) throw new AgentError("usage.invalid", "--port must be an integer 0-65535");
  const json = Boolean(cli.flags.json);
  const open = cli.flags.open !== false;
  return printingCall(env, json)(
    async (c) => {
      const r = await c.call("dashboard.open", port === undefined ? {} : { port });
      // The local page, not the link: the code never goes on a command line (visible in /proc).
      if (open) openBrowser(r.open_file);
      return r;
    },
    (r: DashboardOpen) =>
      [
        `dashboard: ${r.sign_in_url}`,
        `(the link signs in once, until ${r.expires_at}${r.token_required ? "; the page also asks for the gateway token" : ""})`,
      ].join("\n"),
  );
}

/** xdg-open (open on macOS) with the file as its one argument, never through a shell; a failure only means no browser. */
function openBrowser(url: string): void {
  const command = process.platform === "darwin" ? "open" : "xdg-open";
  try {
    const child = spawn(command, [url], { stdio: "ignore", detached: true });
    child.on("error", () => process.stderr.write(`could not start ${command}; open the link above yourself\n`));
    child.unref();
  } catch {
    process.stderr.write(`could not start ${command}; open the link above yourself\n`);
  }
}
