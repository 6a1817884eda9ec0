import { AgentError } from "../errors.js";

/**
 * The fields of one MCP server entry (`mcp_servers.<name>` in config.yaml, or a server of the
 * profile's `mcp.json`), with their types. docs/mcp.md describes them.
 */
export const MCP_SERVER_FIELDS = {
  command: "string",
  args: "list",
  env: "mapping",
  cwd: "string",
  url: "string",
  headers: "mapping",
  timeout: "number",
  connect_timeout: "number",
  enabled: "boolean",
  supports_parallel_tool_calls: "boolean",
  include_tools: "list",
  exclude_tools: "list",
  approve: "string",
} as const;

export type McpFieldType = (typeof MCP_SERVER_FIELDS)[keyof typeof MCP_SERVER_FIELDS];

/** A server name: what `mcp_<server>_<tool>` is made of (letters, digits, `_` and `-`). */
export const MCP_SERVER_NAME = /^[A-Za-z0-9_-]{1,64}$/;

/** The problem with one field's value (null: fine). Types first, then ranges. */
export function mcpFieldProblem(field: string, value: unknown): string | null {
  const type = MCP_SERVER_FIELDS[field as keyof typeof MCP_SERVER_FIELDS];
  if (!type) return `is not a known field (one of ${Object.keys(MCP_SERVER_FIELDS).join(", ")})`;
  switch (type) {
    case "string":
      if (typeof value !== "string") return "must be a string";
      if ((field === "command" || field === "url") && value.trim() === "") return "must not be empty";
      if (field === "url") {
        let u: URL;
        try {
          u = new URL(value);
        } catch {
          return "must be an http(s) URL";
        }
        if (u.protocol !== "http:" && u.protocol !== "https:") return "must be an http(s) URL";
      }
      if (field === "approve" && value !== "ask" && value !== "off") return "must be one of ask, off";
      return null;
    case "number":
      if (typeof value !== "number" || !Number.isFinite(value)) return "must be a number (seconds)";
      if (value <= 0 || value > 86_400) return "must be more than 0 and at most 86400 seconds";
      return null;
    case "boolean":
      return typeof value === "boolean" ? null : "must be true or false";
    case "list":
      return Array.isArray(value) && value.every((v) => typeof v === "string") ? null : "must be a list of strings";
    case "mapping":
      if (!value || typeof value !== "object" || Array.isArray(value)) return "must be a mapping of names to strings";
      return Object.values(value).every((v) => typeof v === "string") ? null : "must map names to strings";
  }
}

/**
 * Every problem of one entry, each naming the server and the key: unknown or mistyped fields,
 * and an entry that is neither a command (stdio) nor a url (streamable HTTP), or both.
 */
export function mcpEntryProblems(name: string, entry: unknown, where: string): AgentError[] {
  const prefix = `mcp_servers.${name}`;
  const bad = (key: string, message: string) => new AgentError("config.invalid_value", `${where}: ${key} ${message}`, { key, where, server: name });
  if (!MCP_SERVER_NAME.test(name)) return [bad(prefix, "is not a valid server name (letters, digits, _ and -, at most 64)")];
  if (!entry || typeof entry !== "object" || Array.isArray(entry)) return [bad(prefix, `must be a mapping of keys, got ${JSON.stringify(entry)}`)];
  const e = entry as Record<string, unknown>;
  const problems: AgentError[] = [];
  for (const [field, value] of Object.entries(e)) {
    const problem = mcpFieldProblem(field, value);
    if (problem) problems.push(bad(`${prefix}.${field}`, `${problem}, got ${JSON.stringify(value)}`));
  }
  // An entry with only `approve` (or `enabled`) adjusts a server defined elsewhere (the profile's mcp.json).
  const onlyAdjusts = Object.keys(e).every((k) => k === "approve" || k === "enabled");
  if (!onlyAdjusts) {
    if (e.command !== undefined && e.url !== undefined) problems.push(bad(prefix, "has both command (stdio) and url (HTTP): give one"));
    else if (e.command === undefined && e.url === undefined) problems.push(bad(prefix, "needs command (a stdio server) or url (an HTTP server)"));
    else if (e.url !== undefined) {
      for (const k of ["args", "env", "cwd"]) if (e[k] !== undefined) problems.push(bad(`${prefix}.${k}`, "applies to stdio servers (command), not to url"));
    } else if (e.headers !== undefined) problems.push(bad(`${prefix}.headers`, "applies to url servers, not to command"));
  }
  return problems;
}
