/**
 * A tool call's arguments and result as a person reads them, for an expanded tool row: a
 * terminal command's output as its lines with the exit code, other results as indented
 * `key: value` lines instead of JSON with escaped newlines. Input is already clean text
 * (terminalText); the output is plain text for the caller to wrap and escape.
 */

/** Parse JSON; a preview cut at its length limit is not JSON: null then. */
function parse(text: string): { value: unknown } | null {
  const t = text.trim();
  if (!/^[[{"]/.test(t)) return null;
  try {
    return { value: JSON.parse(t) };
  } catch {
    return null;
  }
}

/** JSON text that could not be parsed (cut short): its string escapes turned into what they stand for. */
function unescapeCut(text: string): string {
  return text.replace(/\\(["\\/bfnrt]|u[0-9a-fA-F]{4})/g, (_, c: string) => {
    if (c.startsWith("u")) return String.fromCharCode(Number.parseInt(c.slice(1), 16));
    return ({ n: "\n", t: "\t", r: "", b: "", f: "", '"': '"', "\\": "\\", "/": "/" } as Record<string, string>)[c] ?? c;
  });
}

function scalar(v: unknown): string | null {
  if (v === null) return "null";
  if (typeof v === "string") return v.includes("\n") ? null : v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  return null;
}

/** A JSON value as indented lines. */
function readableValue(v: unknown, indent = ""): string[] {
  const s = scalar(v);
  if (s !== null) return [`${indent}${s}`];
  if (typeof v === "string")
    return v
      .replace(/\n$/, "")
      .split("\n")
      .map((l) => `${indent}${l}`);
  if (Array.isArray(v)) {
    if (!v.length) return [`${indent}(none)`];
    return v.flatMap((item) => {
      const one = scalar(item);
      if (one !== null) return [`${indent}- ${one}`];
      const inner = readableValue(item, `${indent}  `);
      return [`${indent}- ${inner[0]!.slice(indent.length + 2)}`, ...inner.slice(1)];
    });
  }
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>);
    if (!entries.length) return [`${indent}(empty)`];
    return entries.flatMap(([k, val]) => {
      const one = scalar(val);
      if (one !== null) return [`${indent}${k}: ${one}`];
      return [`${indent}${k}:`, ...readableValue(val, `${indent}  `)];
    });
  }
  return [`${indent}${String(v)}`];
}

/** A terminal tool's result: the exit code (and how it ended), then the output's lines. */
function terminalResult(r: Record<string, unknown>): string[] {
  const head = [`exit code ${r.exit_code === null || r.exit_code === undefined ? "–" : String(r.exit_code)}`];
  if (r.signal) head.push(`signal ${String(r.signal)}`);
  if (r.timed_out) head.push("timed out");
  if (r.interrupted) head.push("interrupted");
  if (typeof r.duration_ms === "number") head.push(`${r.duration_ms} ms`);
  const lines = [head.join(" · ")];
  if (typeof r.note === "string") lines.push(r.note);
  if (typeof r.truncated_bytes === "number") lines.push(`(${r.truncated_bytes} bytes of output left out in the middle)`);
  const output = typeof r.output === "string" ? r.output.replace(/\n$/, "") : "";
  lines.push(...(output ? output.split("\n") : ["(no output)"]));
  const rest = Object.fromEntries(
    Object.entries(r).filter(([k]) => !["exit_code", "signal", "timed_out", "interrupted", "duration_ms", "note", "truncated_bytes", "output"].includes(k)),
  );
  if (Object.keys(rest).length) lines.push(...readableValue(rest));
  return lines;
}

/** A tool's arguments or result text as readable lines. */
export function readableToolText(text: string, tool?: string): string[] {
  if (!text.trim()) return ["(empty)"];
  const parsed = parse(text);
  if (!parsed && tool === "terminal") {
    // A preview cut at its length: the exit code and the output's beginning are still readable.
    const code = /"exit_code":(-?\d+|null)/.exec(text);
    const output = /"output":"((?:[^"\\]|\\.)*)/.exec(text);
    if (code && output) {
      const cut = !/"output":"(?:[^"\\]|\\.)*"/.test(text);
      return terminalResult({ exit_code: code[1] === "null" ? null : Number(code[1]), output: unescapeCut(output[1]!) + (cut ? "…" : "") });
    }
  }
  if (!parsed) return unescapeCut(text).replace(/\n$/, "").split("\n");
  const v = parsed.value;
  if (tool === "terminal" && v && typeof v === "object" && !Array.isArray(v) && "exit_code" in v) return terminalResult(v as Record<string, unknown>);
  return readableValue(v);
}
