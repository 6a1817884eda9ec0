import { fg } from "../theme.js";
import { terminalText } from "../../shared/terminal-text.js";
import { esc, truncate } from "../text.js";

const MAX_CHILDREN = 50;
const MAX_DEPTH = 8;

/** A JSON value as a tree of tagged lines (├─ └─), long arrays and deep nesting cut short. */
export function jsonTree(value: unknown, width: number, label = "state"): string[] {
  const out: string[] = [];
  walk(label, value, "", "", 0, width, out);
  return out;
}

function leaf(value: unknown): string {
  if (value === null) return `${fg("muted")}null{/}`;
  if (typeof value === "string") return `${fg("ok")}${esc(JSON.stringify(terminalText(value)))}{/}`;
  if (typeof value === "number" || typeof value === "bigint") return `${fg("warn")}${String(value)}{/}`;
  if (typeof value === "boolean") return `${fg("special")}${value}{/}`;
  if (value === undefined) return `${fg("muted")}undefined{/}`;
  return esc(String(value));
}

function walk(key: string, value: unknown, lead: string, childLead: string, depth: number, width: number, out: string[]): void {
  const name = `${fg("accent")}${esc(truncate(terminalText(key), 40))}{/}`;
  if (value === null || typeof value !== "object") {
    const raw = leaf(value);
    // Cut long strings by their visible length.
    const text =
      typeof value === "string" && value.length > width
        ? `${fg("ok")}${esc(truncate(JSON.stringify(terminalText(value)), Math.max(10, width - lead.length - key.length - 4)))}{/}`
        : raw;
    out.push(`${lead}${name}: ${text}`);
    return;
  }
  const entries: Array<[string, unknown]> = Array.isArray(value) ? value.map((v, i) => [`[${i}]`, v]) : Object.entries(value as Record<string, unknown>);
  out.push(`${lead}${name} ${fg("muted")}${Array.isArray(value) ? `array(${entries.length})` : `(${entries.length} keys)`}{/}`);
  if (depth >= MAX_DEPTH) {
    if (entries.length) out.push(`${childLead}└─ ${fg("muted")}…{/}`);
    return;
  }
  const shown = entries.slice(0, MAX_CHILDREN);
  shown.forEach(([k, v], i) => {
    const last = i === shown.length - 1 && entries.length <= MAX_CHILDREN;
    walk(k, v, `${childLead}${last ? "└─ " : "├─ "}`, `${childLead}${last ? "   " : "│  "}`, depth + 1, width, out);
  });
  if (entries.length > MAX_CHILDREN) out.push(`${childLead}└─ ${fg("muted")}… ${entries.length - MAX_CHILDREN} more{/}`);
}
