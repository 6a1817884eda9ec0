import type { Diagnostic } from "vscode-languageserver-protocol";

/** At most this many diagnostics per file are shown, then "and N more". */
export const MAX_DIAGNOSTICS_PER_FILE = 20;
/** A message longer than this is cut (servers sometimes inline whole types). */
export const MAX_MESSAGE_CHARS = 400;

/**
 * How lines moved in an edit that replaced one block of lines: lines before the block keep
 * their number, lines after it shift by the change in length, lines in the block have no
 * counterpart.
 */
export interface LineMap {
  /** The new number of an old line, or null when it was in the replaced block. */
  map(oldLine: number): number | null;
  /** Whether a new line is in the block that replaced it. */
  inBlock(newLine: number): boolean;
}

export function lineMap(oldText: string, newText: string): LineMap {
  const a = oldText.split("\n");
  const b = newText.split("\n");
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (suffix < a.length - prefix && suffix < b.length - prefix && a[a.length - 1 - suffix] === b[b.length - 1 - suffix]) suffix++;
  const delta = b.length - a.length;
  return {
    map: (line) => (line < prefix ? line : line >= a.length - suffix ? line + delta : null),
    inBlock: (line) => line >= prefix && line < b.length - suffix,
  };
}

function identity(d: Diagnostic): string {
  return `${d.source ?? ""}\u0000${d.code ?? ""}\u0000${typeof d.message === "string" ? d.message : d.message.value}`;
}

/**
 * The severity-1 errors of `after` that were not in `before`. An old error whose line only
 * moved (same message, code and source at the mapped line) is not new; nor is one still in the
 * edited block when it was there before. A further instance of an old error elsewhere is new.
 */
export function newErrors(before: Diagnostic[], after: Diagnostic[], lines: LineMap): Diagnostic[] {
  const errors = (list: Diagnostic[]) => list.filter((d) => d.severity === 1);
  const old = errors(before).map((d) => ({ id: identity(d), line: lines.map(d.range.start.line), used: false }));
  const unmatched: Diagnostic[] = [];
  for (const d of errors(after)) {
    const same = old.find((o) => !o.used && o.id === identity(d) && o.line === d.range.start.line);
    if (same) same.used = true;
    else unmatched.push(d);
  }
  const fresh: Diagnostic[] = [];
  for (const d of unmatched) {
    const rewritten = lines.inBlock(d.range.start.line) ? old.find((o) => !o.used && o.id === identity(d) && o.line === null) : undefined;
    if (rewritten) rewritten.used = true;
    else fresh.push(d);
  }
  return fresh;
}

/** Message text safe to show: control characters gone, whitespace collapsed, length bounded. */
export function cleanMessage(text: string): string {
  const flat = String(text)
    .replace(/[\r\n\t]+/g, " ")
    // C0/C1 controls, DEL and the bidi controls that can reorder what a terminal shows.
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`)
    .replace(/ {2,}/g, " ")
    .trim();
  return flat.length > MAX_MESSAGE_CHARS ? `${flat.slice(0, MAX_MESSAGE_CHARS - 1)}…` : flat;
}

/** `ERROR [line:col] message [code] (source)`, 1-based line and column. */
export function formatDiagnostic(d: Diagnostic): string {
  const code = d.code === undefined || d.code === null || d.code === "" ? "" : ` [${cleanMessage(String(d.code))}]`;
  const source = d.source ? ` (${cleanMessage(d.source)})` : "";
  return `ERROR [${d.range.start.line + 1}:${d.range.start.character + 1}] ${cleanMessage(typeof d.message === "string" ? d.message : d.message.value)}${code}${source}`;
}

/** The block for one file, or "" when there is nothing new. */
export function formatBlock(errors: Diagnostic[]): string {
  if (errors.length === 0) return "";
  const sorted = [...errors].sort((x, y) => x.range.start.line - y.range.start.line || x.range.start.character - y.range.start.character);
  const lines = sorted.slice(0, MAX_DIAGNOSTICS_PER_FILE).map(formatDiagnostic);
  if (sorted.length > MAX_DIAGNOSTICS_PER_FILE) lines.push(`and ${sorted.length - MAX_DIAGNOSTICS_PER_FILE} more`);
  return lines.join("\n");
}
