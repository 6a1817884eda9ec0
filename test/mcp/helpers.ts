import { join } from "node:path";
import { ROOT } from "../helpers/cli.js";

/** The real MCP servers from npm (dev dependencies). */
export const EVERYTHING = join(ROOT, "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js");
export const FILESYSTEM = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");

/** A config.yaml block for stdio servers: `name: [command, ...args]`, extra fields per server. */
export function mcpConfig(servers: Record<string, { command: string; args?: string[]; extra?: Record<string, unknown> }>): string {
  const lines = ["mcp_servers:"];
  for (const [name, s] of Object.entries(servers)) {
    lines.push(`  ${name}:`, `    command: ${JSON.stringify(s.command)}`);
    if (s.args) lines.push(`    args: ${JSON.stringify(s.args)}`);
    for (const [k, v] of Object.entries(s.extra ?? {})) lines.push(`    ${k}: ${JSON.stringify(v)}`);
  }
  return `${lines.join("\n")}\n`;
}

export const FAKE_MCP = join(ROOT, "test", "fixtures", "fake-mcp-server.mjs");

/** The fake MCP server (test/fixtures/fake-mcp-server.mjs) in the given modes. */
export function fake(modes: string, extra?: Record<string, unknown>): { command: string; args: string[]; extra?: Record<string, unknown> } {
  return { command: process.execPath, args: [FAKE_MCP, modes], extra };
}
