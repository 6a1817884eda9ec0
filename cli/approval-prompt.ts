import type { Interface } from "node:readline";
import type { ApprovalChoice, PendingApproval } from "../shared/protocol/approvals.js";
import { terminalText } from "../shared/terminal-text.js";

/** Lines of a diff shown in line mode (the TUI dialog scrolls the whole one). */
const DIFF_LINES = 40;

/** The question as the line-mode chat prints it; model text is cleaned of terminal escapes. */
export function renderApproval(a: PendingApproval): string {
  const clean = (s: string) => terminalText(s).replace(/\r/g, "");
  const lines = [`⚠ approval needed (${clean(a.why)})`];
  if (a.kind === "command") {
    lines.push(
      `  $ ${clean(a.details.command ?? a.summary)
        .split("\n")
        .join("\n    ")}`,
    );
    if (a.details.cwd) lines.push(`  in ${clean(a.details.cwd)}`);
  } else if (a.kind === "file_write") {
    lines.push(`  ${clean(a.tool)} ${clean(a.details.path ?? a.summary)}`);
    const diff = clean(a.details.diff ?? "").split("\n");
    for (const l of diff.slice(0, DIFF_LINES)) lines.push(`  │ ${l}`);
    if (diff.length > DIFF_LINES) lines.push(`  │ … ${diff.length - DIFF_LINES} more lines`);
  } else {
    lines.push(`  ${clean(a.summary)}`);
  }
  const seconds = Math.max(0, Math.round((a.expiresAt - Date.now()) / 1000));
  lines.push(`  [o]nce · [s]ession · [a]lways · [d]eny (d <reason> tells the model why) — denied in ${seconds} s without an answer`);
  return lines.join("\n");
}

/** `o`, `once`, `s`, `session`, `a`, `always`, `d [reason]`, `deny [reason]`, `n`/`no` = deny; null: not an answer. */
export function parseApprovalAnswer(input: string): { choice: ApprovalChoice; reason?: string } | null {
  const m = /^\s*([A-Za-z]+)\b[\s:,-]*(.*)$/s.exec(input);
  if (!m) return null;
  const word = m[1]!.toLowerCase();
  const rest = m[2]!.trim();
  const choice: ApprovalChoice | null = ["o", "once", "y", "yes"].includes(word)
    ? "once"
    : ["s", "session"].includes(word)
      ? "session"
      : ["a", "always"].includes(word)
        ? "always"
        : ["d", "deny", "n", "no"].includes(word)
          ? "deny"
          : null;
  if (!choice) return null;
  if (choice !== "deny") return rest ? null : { choice };
  return rest ? { choice, reason: rest } : { choice };
}

/** Ask on `rl` until a valid answer comes or `signal` aborts (answered elsewhere, timed out): null then. */
export async function askApproval(
  rl: Interface,
  a: PendingApproval,
  signal: AbortSignal,
  write: (text: string) => void,
): Promise<{ choice: ApprovalChoice; reason?: string } | null> {
  write(`${renderApproval(a)}\n`);
  for (;;) {
    if (signal.aborted) return null;
    const line = await new Promise<string | null>((resolve) => {
      const onAbort = () => resolve(null);
      signal.addEventListener("abort", onAbort, { once: true });
      rl.question("approve? ", { signal }, (answer) => {
        signal.removeEventListener("abort", onAbort);
        resolve(answer);
      });
    });
    if (line === null) return null;
    const answer = parseApprovalAnswer(line);
    if (answer) return answer;
    write("  answer o (once), s (session), a (always) or d [reason] (deny)\n");
  }
}
