import { snakeKeys } from "../shared/json-keys.js";
import { terminalJson, terminalText } from "../shared/terminal-text.js";

export { snakeKeys };

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
 * Print `data` as the CLI's JSON: one object (a bare list is an error of the caller: wrap it in
 * a named field), snake_case keys, safe for a terminal. `indent` 0 prints one line (a stream of
 * events, one object a line).
 */
export function printJson(data: unknown, indent = 2): void {
  if (data === null || typeof data !== "object" || Array.isArray(data)) throw new Error("CLI JSON output must be an object with named fields");
  process.stdout.write(terminalJson(snakeKeys(data), indent || undefined) + "\n");
}
