import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { CallToolRequestSchema, ListToolsRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { connectDaemon } from "../../shared/client/index.js";
import { EXIT } from "../../shared/error-codes.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { reportFailure } from "../../shared/report-failure.js";
import { APP_VERSION } from "../../shared/version.js";
import { kanbanTools } from "../kanban/api.js";
import { toParameters } from "../tools/definition.js";

/**
 * `agent mcp serve` (the CLI execs this file: `node dist/daemon/mcp/serve-main.js --home <dir>`): this agent's own tools for any MCP client, on stdio: session_search, memory
 * and skill_view run in the daemon as the caller's profile (`-p`); the kanban tools are offered
 * with today's gating (under AGENT_KANBAN_TASK only the worker tools, otherwise only the
 * orchestrator tools) and call the daemon's kanban RPCs. Nothing but protocol goes to stdout.
 */
async function serveMcp(home: string): Promise<number> {
  const client = await connectDaemon({ home, autostart: true });
  const cwd = process.cwd();
  const sessionId = "mcp-serve";
  const toolCtx = { cwd, sessionId, env: process.env, profile: client.daemon.profile ?? undefined };
  const kanban = kanbanTools((method, params) => client.call(method, params as never)).filter((t) => t.available?.(toolCtx) ?? true);
  const hosted = (await client.call("chat.worker.context", { serve: true })).tools;
  const listed = [
    ...hosted.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters })),
    ...kanban.map((t) => ({ name: t.name, description: t.description, inputSchema: t.parameters ?? toParameters(t.args) })),
  ];
  const server = new Server({ name: "agent", version: APP_VERSION }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: listed as never }));
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const { name, arguments: args } = request.params;
    const text = (value: unknown) => (typeof value === "string" ? value : JSON.stringify(value, null, 2));
    try {
      if (hosted.some((t) => t.name === name)) {
        const r = await client.call("chat.worker.tool", { sessionId, name, args: args ?? {}, cwd, serve: true });
        return { content: [{ type: "text", text: text(r.output) }], isError: !r.ok };
      }
      const tool = kanban.find((t) => t.name === name);
      if (!tool) return { content: [{ type: "text", text: `unknown tool ${name}` }], isError: true };
      const parsed = (tool.args as z.ZodType).safeParse(args ?? {});
      if (!parsed.success) return { content: [{ type: "text", text: `invalid arguments for ${name}: ${z.prettifyError(parsed.error)}` }], isError: true };
      const out = await tool.run(parsed.data, { ...toolCtx, signal: extra.signal }, undefined as never);
      return { content: [{ type: "text", text: text(out.output) }], isError: !out.ok };
    } catch (error) {
      return { content: [{ type: "text", text: toAgentError(error).message }], isError: true };
    }
  });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    server.onclose = () => resolve();
    process.stdin.once("end", () => resolve());
  });
  await server.connect(transport);
  await closed;
  await server.close().catch(() => undefined);
  client.close();
  return EXIT.ok;
}

const argv = process.argv.slice(2);
const at = argv.indexOf("--home");
const home = at >= 0 ? argv[at + 1] : undefined;
(home ? serveMcp(home) : Promise.reject(new AgentError("usage.invalid", "mcp serve: --home is required"))).then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.exitCode = reportFailure(error, argv);
  },
);
