import { terminalJson, terminalText } from "../shared/terminal-text.js";

/**
 * Print a command's result: JSON with `--json`, else the human text. Both are made safe for a
 * terminal (results carry text a model, a tool or a file produced; see shared/terminal-text.ts),
 * so colours, if any are added, go on after this.
 */
export function printResult<T>(data: T, json: boolean, text: (data: T) => string): void {
  if (json) printJson(data);
  else {
    const out = terminalText(text(data));
    if (out) process.stdout.write(out.endsWith("\n") ? out : out + "\n");
  }
}

/** A plain aligned table for terminal output. */
export function table(headers: string[], unsafeRows: string[][]): string {
  // Cells are cleaned before measuring, so the columns line up.
  const rows = unsafeRows.map((r) => r.map((c) => terminalText(c ?? "").replace(/[\n\t]/g, " ")));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : (c ?? "").padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [line(headers), ...rows.map(line)].join("\n");
}

export function formatDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  const h = Math.floor(m / 60);
  if (h < 24) return `${h}h ${m % 60}m`;
  return `${Math.floor(h / 24)}d ${h % 24}h`;
}

/**
 * The one JSON convention of the CLI (docs/cli.md): every `--json` output is one object with
 * snake_case keys. The RPC results keep the casing the daemon and the TUI use; the conversion
 * happens here, once, for every command. The values under the keys below are user data (an
 * actor's state, a config value, a log record's fields, an event's payload): they are printed
 * as they are, whatever their keys look like.
 */
const USER_DATA_KEYS = new Set([
  "state",
  "input",
  "output",
  "value",
  "values",
  "fields",
  "data",
  "metadata",
  "args",
  "arguments",
  "error",
  "content",
  "env_vars",
]);

const snake = (key: string) =>
  /[A-Z]/.test(key) && /^[A-Za-z0-9]+$/.test(key)
    ? key
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
        .toLowerCase()
    : key;

/** `value` with every object key (outside user data) in snake_case. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
    // A Date, a class instance: what JSON.stringify would make of it.
    const json = (value as { toJSON?: () => unknown }).toJSON?.();
    return json === undefined ? value : snakeKeys(json);
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = snake(key);
    out[name] = USER_DATA_KEYS.has(name) ? v : snakeKeys(v);
  }
  return out;
}

/**
 * Print `data` as the CLI's JSON: one object (a bare list is an error of the caller: wrap it in
 * a named field), snake_case keys, safe for a terminal. `indent` 0 prints one line (a stream of
 * events, one object a line).
 */
export function printJson(data: unknown, indent = 2): void {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("CLI JSON output must be an object with named fields");
  process.stdout.write(terminalJson(snakeKeys(data), indent || undefined) + "\n");
}
