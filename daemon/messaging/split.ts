/**
 * Split a reply into pieces of at most `limit` characters (UTF-16 code units, as the platforms
 * count them): on paragraph boundaries first, then on line boundaries, then on characters (never
 * inside a surrogate pair). Pieces are trimmed of the blank lines at their cut; the order is kept.
 */
export function splitText(text: string, limit: number): string[] {
  if (limit < 2) throw new RangeError("splitText: limit must be at least 2");
  const out: string[] = [];
  const push = (piece: string) => {
    const t = piece.replace(/^\n+|\s+$/g, "");
    if (t) out.push(t);
  };
  let cur = "";
  const flush = () => {
    push(cur);
    cur = "";
  };
  for (const para of text.split(/\n{2,}/)) {
    const sep = cur ? "\n\n" : "";
    if (cur.length + sep.length + para.length <= limit) {
      cur += sep + para;
      continue;
    }
    flush();
    if (para.length <= limit) {
      cur = para;
      continue;
    }
    for (const line of para.split("\n")) {
      const lsep = cur ? "\n" : "";
      if (cur.length + lsep.length + line.length <= limit) {
        cur += lsep + line;
        continue;
      }
      flush();
      if (line.length <= limit) {
        cur = line;
        continue;
      }
      const chunks = splitChars(line, limit);
      // Every chunk but the last is full; the last may take the next line's start.
      for (const chunk of chunks.slice(0, -1)) out.push(chunk);
      cur = chunks[chunks.length - 1] ?? "";
    }
  }
  flush();
  return out;
}

function splitChars(line: string, limit: number): string[] {
  const chunks: string[] = [];
  let i = 0;
  while (i < line.length) {
    let end = Math.min(i + limit, line.length);
    // Do not cut a surrogate pair in two.
    if (end < line.length && /[\uD800-\uDBFF]/.test(line[end - 1] ?? "")) end--;
    chunks.push(line.slice(i, end));
    i = end;
  }
  return chunks;
}
