/**
 * A cheap guard against regular expressions that backtrack catastrophically (docs/approvals.md):
 * a quantified group that itself holds an unbounded quantifier, like `(a+)+` or `(\w*x?)*`,
 * and backreferences. JavaScript regexes cannot be given a time limit, and one such pattern
 * tested against a model's command would stall the daemon for every client. A heuristic: it
 * refuses the classic shapes, not every slow pattern.
 */
export function nestedQuantifier(source: string): string | null {
  // One frame per open group: does it (or a group inside it) hold an unbounded quantifier?
  const stack: boolean[] = [false];
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i]!;
    if (c === "\\") {
      if (!inClass && /[1-9k]/.test(source[i + 1] ?? "")) return "a backreference";
      i++;
      continue;
    }
    if (inClass) {
      if (c === "]") inClass = false;
      continue;
    }
    if (c === "[") inClass = true;
    else if (c === "(") stack.push(false);
    else if (c === ")") {
      const inner = stack.length > 1 ? stack.pop()! : false;
      const next = source[i + 1] ?? "";
      const quantified = next === "*" || next === "+" || (next === "{" && /^\{\d*,\d*\}|^\{\d{2,}\}/.test(source.slice(i + 1)));
      if (inner && quantified) return `a repeated group with a repeat inside (${source.slice(Math.max(0, i - 20), i + 2)})`;
      if (inner || quantified) stack[stack.length - 1] = true;
    } else if (c === "*" || c === "+" || (c === "{" && /^\{\d*,\}/.test(source.slice(i)))) stack[stack.length - 1] = true;
  }
  return null;
}
