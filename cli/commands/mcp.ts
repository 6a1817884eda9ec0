import { fileURLToPath } from "node:url";
import { AgentError } from "../../shared/errors.js";
import type { McpServerInfo } from "../../shared/protocol/mcp.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import { execNode } from "../exec-node.js";
import type { CliEnv } from "../command.js";
import { printingCall, withDaemon } from "../with-daemon.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";

/** `agent mcp`: the MCP servers of the profile (`-p`). Every subcommand is one call to the daemon. */
const SPEC = {
  usage: "agent mcp <list|tools|test|add|remove|enable|disable|restart|serve>",
  description: "MCP servers: their state and tools, adding and removing them; serve this agent's own tools over MCP.",
  flags: {
    env: { type: "string", isMultiple: true },
    header: { type: "string", isMultiple: true },
    url: { type: "string" },
    cwd: { type: "string" },
    timeout: { type: "number" },
    replace: { type: "boolean" },
  },
  help: `Subcommands
  list                       each server with its state, tool count and last error
  tools <server>             the server's tools (starts it when needed)
  test <server>              connect afresh, list the tools, print the timings
  add <name> [--env K=V]... [--cwd DIR] [--timeout S] -- <command> [args...]
                             add a stdio server to config.yaml (comments kept)
  add <name> --url <url> [--header K=V]...
                             add a streamable HTTP server
  remove <name>              remove it from config.yaml
  enable <name>              turn it on (enabled: true in the profile's config.yaml); a
                             distribution's servers are installed off until this
  disable <name>             turn it off (enabled: false), keeping its entry
  restart <name>             stop it and start it again
  serve                      an MCP server on stdio with this agent's tools (for other MCP clients)

Examples
  $ agent mcp add everything -- npx -y @modelcontextprotocol/server-everything
  $ agent mcp add docs --url https://example.com/mcp --header 'Authorization=Bearer \${DOCS_TOKEN}'
  $ agent -p work mcp list`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const dash = argv.indexOf("--");
  const own = dash >= 0 ? argv.slice(0, dash) : argv;
  const after = dash >= 0 ? argv.slice(dash + 1) : [];
  const cli = parseCommand(own, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = printingCall(env, json);
  if (sub !== "add" && dash >= 0) throw new AgentError("usage.invalid", `\`--\` is for \`agent mcp add <name> -- <command>\`, not for mcp ${sub}`);
  switch (sub) {
    case "list":
      expectArgs(sub, args, 0);
      return call(
        (c) => c.call("mcp.list", {}),
        (r) => listText(r.profile, r.servers),
      );
    case "tools": {
      const server = expectArgs(sub, args, 1);
      return call(
        (c) => c.call("mcp.tools", { server }),
        (r) =>
          r.tools.length
            ? table(
                ["TOOL", "MODEL NAME", "DESCRIPTION"],
                r.tools.map((t) => [terminalText(t.name), t.model_name, oneLine(t.description)]),
              ) + warnings(r.server.warnings)
            : `${server} offers no tools${warnings(r.server.warnings)}`,
      );
    }
    case "test": {
      const server = expectArgs(sub, args, 1);
      return withDaemon(env, async (client) => {
        const r = await client.call("mcp.test", { server });
        printResult(r, json, () =>
          r.ok
            ? [
                `${server}: ok — connected in ${r.timings.connect_ms} ms, listed ${r.tools.length} tool${r.tools.length === 1 ? "" : "s"} in ${r.timings.list_ms} ms (${r.timings.total_ms} ms in all)`,
                ...r.tools.map((t) => `  ${terminalText(t)}`),
              ].join("\n") + warnings(r.warnings)
            : `${server}: failed after ${r.timings.total_ms} ms: ${terminalText(r.error ?? "")}${r.stderr_tail ? `\nstderr:\n${terminalText(r.stderr_tail)}` : ""}`,
        );
        return r.ok ? EXIT.ok : EXIT.failure;
      });
    }
    case "add": {
      const name = expectArgs(sub, args, 1);
      const f = cli.flags;
      const entry: Record<string, unknown> = {};
      if (f.url !== undefined) {
        if (after.length) throw new AgentError("usage.invalid", "give either --url <url> or `-- <command> [args...]`, not both");
        if (f.env?.length || f.cwd) throw new AgentError("usage.invalid", "--env and --cwd are for stdio servers (-- <command>), not --url");
        entry.url = f.url;
        if (f.header?.length) entry.headers = pairs(f.header, "--header");
      } else {
        if (!after.length) throw new AgentError("usage.invalid", "agent mcp add needs `-- <command> [args...]` (a stdio server) or --url <url>");
        if (f.header?.length) throw new AgentError("usage.invalid", "--header is for --url servers");
        entry.command = after[0];
        if (after.length > 1) entry.args = after.slice(1);
        if (f.env?.length) entry.env = pairs(f.env, "--env");
        if (f.cwd) entry.cwd = f.cwd;
      }
      if (f.timeout !== undefined) entry.timeout = f.timeout;
      return call(
        (c) => c.call("mcp.add", { server: name, entry, replace: f.replace === true }),
        (r) =>
          `${r.replaced ? "replaced" : "added"} MCP server ${r.server} in ${r.file}; its tools are offered from the next turn (agent mcp test ${r.server})`,
      );
    }
    case "remove": {
      const server = expectArgs(sub, args, 1);
      return call(
        (c) => c.call("mcp.remove", { server }),
        (r) => `removed MCP server ${r.server} from ${r.file}`,
      );
    }
    case "enable":
    case "disable": {
      const server = expectArgs(sub, args, 1);
      return call(
        (c) => c.call("mcp.enable", { server, enabled: sub === "enable" }),
        (r) =>
          `${r.enabled ? "enabled" : "disabled"} MCP server ${r.server} of profile ${r.profile} in ${r.file}${r.enabled ? "; its tools are offered from the next turn" : ""}`,
      );
    }
    case "restart": {
      const server = expectArgs(sub, args, 1);
      return withDaemon(env, async (client) => {
        const r = await client.call("mcp.restart", { server });
        printResult(
          r,
          json,
          () => `${server}: ${r.server.state}${r.server.state === "ready" ? `, ${r.server.tools} tools` : `: ${terminalText(r.server.last_error ?? "")}`}`,
        );
        return r.server.state === "ready" ? EXIT.ok : EXIT.failure;
      });
    }
    case "serve":
      expectArgs(sub, args, 0);
      // The server runs in its own entry (daemon code; the CLI imports none), on this process's stdio.
      return execNode(fileURLToPath(new URL("../../daemon/mcp/serve-main.js", import.meta.url)), ["--home", env.home]);
    default:
      throw new AgentError("usage.missing_subcommand", "agent mcp needs a subcommand: list, tools, test, add, remove, enable, disable, restart or serve");
  }
}

function expectArgs(sub: string, args: string[], n: 0): void;
function expectArgs(sub: string, args: string[], n: 1): string;
function expectArgs(sub: string, args: string[], n: number): string | undefined {
  if (args.length !== n)
    throw new AgentError(
      "usage.invalid",
      n === 0 ? `agent mcp ${sub} takes no arguments` : `agent mcp ${sub} needs exactly one server name, got ${args.length}`,
    );
  return args[0];
}

function pairs(list: string[], flag: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of list) {
    const eq = item.indexOf("=");
    if (eq <= 0) throw new AgentError("usage.invalid", `${flag} takes NAME=VALUE, got ${JSON.stringify(item)}`);
    out[item.slice(0, eq)] = item.slice(eq + 1);
  }
  return out;
}

function oneLine(text: string): string {
  const t = terminalText(text).replace(/\s+/g, " ").trim();
  return t.length > 70 ? `${t.slice(0, 69)}…` : t;
}

function warnings(list: string[]): string {
  return list.length ? `\n${list.map((w) => `warning: ${terminalText(w)}`).join("\n")}` : "";
}

export function listText(profile: string, servers: McpServerInfo[]): string {
  if (!servers.length) return `no MCP servers configured for profile ${profile} (agent mcp add <name> -- <command>)`;
  return table(
    ["SERVER", "TRANSPORT", "STATE", "TOOLS", "LAST ERROR"],
    servers.map((s) => [s.name, s.transport, s.state, s.state === "ready" ? String(s.tools) : "-", s.last_error ? oneLine(s.last_error) : ""]),
  );
}
