import { mkdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { parse, stringify, TomlError } from "smol-toml";
import type { McpServerEntry } from "../../shared/config/defaults.js";
import { AgentError } from "../../shared/errors.js";
import { writeFileAtomic } from "../store/atomic-file.js";
import { OWN_SERVER_NAME } from "./coder-turn.js";

/**
 * The managed block of the coder app-server's `config.toml` (under its CODEX_HOME): our MCP
 * servers and the default permission profile, between two marker lines. It is written at the
 * very top of the file as dotted top-level keys (`mcp_servers.x.command = …`), so it never
 * changes which table the user's own lines belong to; everything outside the markers is kept
 * byte for byte. Values are rendered by smol-toml and the result is parsed back before it is
 * written. A user file that does not parse is reported with its line, and nothing is written.
 */
export const BLOCK_BEGIN = "# >>> agent managed block: rewritten by `agent` on each enable; edits inside are lost >>>";
export const BLOCK_END = "# <<< agent managed block <<<";

export interface ManagedConfigInput {
  codexHome: string;
  /** The MCP servers of the profile's config (name → entry). */
  servers: Record<string, McpServerEntry>;
  /** How codex starts `agent mcp serve`. */
  ownServer: { command: string; args: string[]; env?: Record<string, string> };
  /** The upstream codex talks to (its key travels in the environment variable `envKey`, never in the file). */
  provider?: { id: string; baseUrl: string; envKey: string };
}

export interface ManagedConfigResult {
  path: string;
  /** Entries left out: the user's own lines define them (user content wins). */
  skipped: string[];
  written: boolean;
}

/** Where our block is, in `text`: [start, end) of the block's lines including the markers and the newline after. */
function findBlock(text: string): { start: number; end: number } | null {
  const start = text.indexOf(`${BLOCK_BEGIN}\n`);
  if (start < 0 || (start > 0 && text[start - 1] !== "\n")) return null;
  const endMarker = text.indexOf(`${BLOCK_END}\n`, start);
  if (endMarker < 0) {
    if (text.endsWith(BLOCK_END)) return { start, end: text.length };
    return null;
  }
  return { start, end: endMarker + BLOCK_END.length + 1 };
}

/**
 * The user's part of the file: everything but our block. Our block holds only dotted key lines;
 * a table codex itself inserted before our end marker (it appends `[projects."…"]` when it trusts
 * a folder) is not ours, and is kept, moved after the block.
 */
export function userPart(text: string): { before: string; after: string } {
  const block = findBlock(text);
  if (!block) return { before: "", after: text };
  const inside = text.slice(block.start, block.end);
  const foreignAt = inside.search(/^\s*\[/m);
  const endAt = inside.lastIndexOf(BLOCK_END);
  const foreign = foreignAt >= 0 && foreignAt < endAt ? inside.slice(foreignAt, endAt) : "";
  return { before: text.slice(0, block.start), after: foreign + text.slice(block.end) };
}

function key(part: string): string {
  return /^[A-Za-z0-9_-]+$/.test(part) ? part : JSON.stringify(part);
}

/** `a.b.c = <value>`, the value rendered by smol-toml. */
function line(path: string[], value: unknown): string {
  const rendered = stringify({ v: value }).trim();
  if (!rendered.startsWith("v = ")) throw new AgentError("internal.error", `cannot render ${path.join(".")} as one TOML value`);
  return `${path.map(key).join(".")} = ${rendered.slice(4)}`;
}

/** One `mcp_servers.<name>` entry in codex's terms. */
export function codexServer(entry: McpServerEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  // A `${VAR}` reference (docs/mcp.md) is never expanded into the file: codex reads the variable
  // from its own environment instead (env_vars, env_http_headers, bearer_token_env_var).
  const whole = (v: string) => /^\$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(v)?.[1];
  if (entry.url) {
    out.url = entry.url;
    const plain: Record<string, string> = {};
    const fromEnv: Record<string, string> = {};
    for (const [k, v] of Object.entries(entry.headers ?? {})) {
      const bearer = /^Bearer \$\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(v)?.[1];
      if (k.toLowerCase() === "authorization" && bearer) out.bearer_token_env_var = bearer;
      else if (whole(v)) fromEnv[k] = whole(v)!;
      else plain[k] = v;
    }
    if (Object.keys(plain).length) out.http_headers = plain;
    if (Object.keys(fromEnv).length) out.env_http_headers = fromEnv;
  } else if (entry.command) {
    out.command = entry.command;
    if (entry.args?.length) out.args = [...entry.args];
    const plain: Record<string, string> = {};
    const passed: string[] = [];
    for (const [k, v] of Object.entries(entry.env ?? {})) {
      if (whole(v) === k) passed.push(k);
      else plain[k] = v;
    }
    if (Object.keys(plain).length) out.env = plain;
    if (passed.length) out.env_vars = passed;
    if (entry.cwd) out.cwd = entry.cwd;
  }
  if (typeof entry.timeout === "number") out.tool_timeout_sec = entry.timeout;
  if (typeof entry.connect_timeout === "number") out.startup_timeout_sec = entry.connect_timeout;
  if (entry.enabled === false) out.enabled = false;
  return out;
}

function flatten(prefix: string[], value: Record<string, unknown>, out: string[]): void {
  for (const [k, v] of Object.entries(value)) {
    if (v && typeof v === "object" && !Array.isArray(v)) flatten([...prefix, k], v as Record<string, unknown>, out);
    else out.push(line([...prefix, k], v));
  }
}

function tomlProblem(error: unknown, path: string): AgentError {
  if (error instanceof TomlError) {
    return new AgentError(
      "coder.invalid_config",
      `${path} line ${error.line}, column ${error.column} is not valid TOML: ${error.message.split("\n")[0]}; nothing was written`,
    );
  }
  return new AgentError("coder.invalid_config", `${path} is not valid TOML: ${(error as Error).message}; nothing was written`);
}

/** Render the whole file: our block first, then the user's content unchanged. */
export function renderManagedConfig(existing: string, input: Omit<ManagedConfigInput, "codexHome">, path = "config.toml"): { text: string; skipped: string[] } {
  const { before, after } = userPart(existing);
  const userText = before + after;
  let user: Record<string, any>;
  try {
    user = parse(userText) as Record<string, any>;
  } catch (error) {
    throw tomlProblem(error, path);
  }
  const skipped: string[] = [];
  const lines: string[] = [];
  if (user.default_permissions === undefined) lines.push(line(["default_permissions"], ":workspace"));
  else skipped.push("default_permissions");
  const servers: Array<[string, Record<string, unknown>]> = [
    [OWN_SERVER_NAME, { command: input.ownServer.command, args: input.ownServer.args, ...(input.ownServer.env ? { env: input.ownServer.env } : {}) }],
    ...Object.entries(input.servers)
      .filter(([name]) => name !== OWN_SERVER_NAME)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, entry]): [string, Record<string, unknown>] => [name, codexServer(entry)]),
  ];
  for (const [name, server] of servers) {
    if (user.mcp_servers?.[name] !== undefined) {
      skipped.push(`mcp_servers.${name}`);
      continue;
    }
    flatten(["mcp_servers", name], server, lines);
  }
  if (input.provider) {
    const id = input.provider.id;
    if (user.model_providers?.[id] !== undefined) skipped.push(`model_providers.${id}`);
    else flatten(["model_providers", id], { name: id, base_url: input.provider.baseUrl, wire_api: "responses", env_key: input.provider.envKey }, lines);
  }
  const block = `${BLOCK_BEGIN}\n${lines.join("\n")}\n${BLOCK_END}\n`;
  const text = before + block + after;
  try {
    parse(text);
  } catch (error) {
    // Our lines clash with the user's (a `[mcp_servers]` header of theirs, say): say so, write nothing.
    throw tomlProblem(error, `${path} (with the managed block)`);
  }
  return { text, skipped };
}

/** Write (or rewrite) the managed block of `<codexHome>/config.toml`. */
export async function writeManagedConfig(input: ManagedConfigInput): Promise<ManagedConfigResult> {
  const path = join(input.codexHome, "config.toml");
  const existing = await readFile(path, "utf8").catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return "";
    throw error;
  });
  const { text, skipped } = renderManagedConfig(existing, input, path);
  if (text === existing) return { path, skipped, written: false };
  await mkdir(input.codexHome, { recursive: true, mode: 0o700 });
  await writeFileAtomic(path, text, { mode: 0o600 });
  return { path, skipped, written: true };
}
