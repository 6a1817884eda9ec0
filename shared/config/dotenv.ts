/**
 * A small `.env` reader and editor. Editing works line by line so every other line, comment and
 * blank line of the user's file stays byte for byte.
 */
const LINE = /^\s*(?:export\s+)?([A-Za-z_][A-Za-z0-9_.-]*)\s*=\s*(.*)$/;

export function parseDotenv(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const m = LINE.exec(lines[i]!);
    if (!m) continue;
    let raw = m[2]!;
    const quote = raw[0];
    if (quote === '"' || quote === "'") {
      // A quoted value may span lines until its closing quote.
      while (!closes(raw, quote) && i + 1 < lines.length) raw += "\n" + lines[++i];
      let body = raw.slice(1, raw.lastIndexOf(quote) > 0 ? raw.lastIndexOf(quote) : undefined);
      if (quote === '"') body = body.replace(/\\n/g, "\n").replace(/\\"/g, '"');
      out[m[1]!] = body;
    } else {
      out[m[1]!] = raw.replace(/\s+#.*$/, "").trim();
    }
  }
  return out;
}

/** Remove every entry of `keys`; returns the new text and the keys actually removed (in file order). */
export function removeDotenvKeys(text: string, keys: readonly string[]): { text: string; removed: string[] } {
  const lines = text.split(/(?<=\n)/); // keep each line's own ending
  const kept: string[] = [];
  const removed: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = LINE.exec(lines[i]!.replace(/\r?\n$/, ""));
    if (!m || !keys.includes(m[1]!)) {
      kept.push(lines[i]!);
      continue;
    }
    removed.push(m[1]!);
    const value = m[2]!;
    const quote = value[0];
    if (quote === '"' || quote === "'") {
      let raw = value;
      while (!closes(raw, quote) && i + 1 < lines.length) raw += "\n" + lines[++i]!.replace(/\r?\n$/, "");
    }
  }
  return { text: kept.join(""), removed };
}

function closes(raw: string, quote: string): boolean {
  for (let i = 1; i < raw.length; i++) {
    if (raw[i] === "\\" && quote === '"') i++;
    else if (raw[i] === quote) return true;
  }
  return false;
}

/**
 * Set `key` to `value`: its first line is replaced in place (a later duplicate removed), else the
 * entry is appended; every other line stays byte for byte. The value is double-quoted when it
 * holds anything a reader could take apart (`#`, `$`, …); callers refuse newlines and backslashes.
 */
export function setDotenvKey(text: string, key: string, value: string): string {
  const quoted = /^[A-Za-z0-9_./:+=@,-]*$/.test(value) ? value : `"${value.replace(/"/g, '\\"')}"`;
  const entry = `${key}=${quoted}`;
  const lines = text.split(/(?<=\n)/);
  const at = lines.findIndex((l) => LINE.exec(l.replace(/\r?\n$/, ""))?.[1] === key);
  if (at < 0) return `${text}${text && !text.endsWith("\n") ? "\n" : ""}${entry}\n`;
  const { text: rest } = removeDotenvKeys(lines.slice(at).join(""), [key]);
  const ending = /\r?\n$/.exec(lines[at]!)?.[0] ?? "\n";
  return `${lines.slice(0, at).join("")}${entry}${ending}${rest}`;
}
