const DIFF_LINES = 400;

/** A compact diff of a write for the question: the changed middle of the file as -/+ lines (cut when long). */
export function writeDiff(before: string | null, after: string): string {
  const a = before === null ? [] : before.split("\n");
  const b = after.split("\n");
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const lines = [before === null ? "(new file)" : `@@ line ${start + 1} @@`];
  for (const l of a.slice(start, endA)) lines.push(`-${l}`);
  for (const l of b.slice(start, endB)) lines.push(`+${l}`);
  if (lines.length === 1) lines.push("(no change)");
  return lines.length > DIFF_LINES ? `${lines.slice(0, DIFF_LINES).join("\n")}\n… (${lines.length - DIFF_LINES} more lines)` : lines.join("\n");
}
