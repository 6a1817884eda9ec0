import { createHash } from "node:crypto";

export const MAX_TOOL_NAME = 64;

function sanitize(part: string): string {
  return part.replace(/[^A-Za-z0-9_-]/g, "_");
}

/**
 * The names the model sees: `mcp_<server>_<tool>`, sanitized to `[A-Za-z0-9_-]`, at most 64
 * characters. Deterministic whatever order the servers answered in: the pairs are sorted, a name
 * cut to 64 ends with a short hash of the full name, and a name already taken gets `_2`, `_3` …
 * (cut to fit). `taken` holds names that exist already (the built-in tools).
 */
export function toolNames(pairs: Array<{ server: string; tool: string }>, taken: Iterable<string> = []): Map<string, string> {
  const used = new Set(taken);
  const out = new Map<string, string>();
  const sorted = [...pairs].sort((a, b) => (a.server === b.server ? cmp(a.tool, b.tool) : cmp(a.server, b.server)));
  for (const { server, tool } of sorted) {
    const full = `mcp_${sanitize(server)}_${sanitize(tool)}`;
    let base = full;
    if (base.length > MAX_TOOL_NAME) {
      const hash = createHash("sha256").update(`${server}\0${tool}`).digest("hex").slice(0, 6);
      base = `${base.slice(0, MAX_TOOL_NAME - 7)}_${hash}`;
    }
    let name = base;
    for (let n = 2; used.has(name); n++) {
      const suffix = `_${n}`;
      name = `${base.slice(0, MAX_TOOL_NAME - suffix.length)}${suffix}`;
    }
    used.add(name);
    out.set(key(server, tool), name);
  }
  return out;
}

export function key(server: string, tool: string): string {
  return `${server}\0${tool}`;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
