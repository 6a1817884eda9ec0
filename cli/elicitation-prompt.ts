import type { Interface } from "node:readline";
import { describeField, type ElicitField, type ElicitValue, elicitationFields, parseFieldInput } from "../shared/elicitation.js";
import type { ElicitationAction, PendingElicitation } from "../shared/protocol/approvals.js";
import { terminalText } from "../shared/terminal-text.js";

const clean = (s: string) => terminalText(s).replace(/\r/g, "");

/** The question as the line-mode chat prints it; the server's text is cleaned of terminal escapes. */
export function renderElicitation(e: PendingElicitation, fields: ElicitField[]): string {
  const seconds = Math.max(0, Math.round((e.expiresAt - Date.now()) / 1000));
  const lines = [
    `? MCP server ${clean(e.server)} asks for input:`,
    ...clean(e.message)
      .split("\n")
      .map((l) => `  ${l}`),
  ];
  if (fields.length) lines.push(`  ${fields.length} field${fields.length === 1 ? "" : "s"}: ${fields.map((f) => clean(f.label)).join(", ")}`);
  lines.push(`  [a]nswer · [d]ecline · [c]ancel — declined in ${seconds} s without an answer`);
  return lines.join("\n");
}

/** `a`/`answer`/`accept`/`y`, `d`/`decline`/`n`, `c`/`cancel`; null: not an answer. */
export function parseElicitationChoice(input: string): ElicitationAction | null {
  const w = input.trim().toLowerCase();
  if (["a", "answer", "accept", "y", "yes"].includes(w)) return "accept";
  if (["d", "decline", "n", "no"].includes(w)) return "decline";
  if (["c", "cancel"].includes(w)) return "cancel";
  return null;
}

function question(rl: Interface, prompt: string, signal: AbortSignal): Promise<string | null> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve(null);
    const onAbort = () => resolve(null);
    signal.addEventListener("abort", onAbort, { once: true });
    rl.question(prompt, { signal }, (answer) => {
      signal.removeEventListener("abort", onAbort);
      resolve(answer);
    });
  });
}

/**
 * Ask on `rl`: answer, decline or cancel; to answer, each field in turn (Enter takes the default
 * or leaves an optional field out). Null when `signal` aborts (answered elsewhere, timed out).
 */
export async function askElicitation(
  rl: Interface,
  e: PendingElicitation,
  signal: AbortSignal,
  write: (text: string) => void,
): Promise<{ action: ElicitationAction; content?: Record<string, ElicitValue> } | null> {
  let fields: ElicitField[];
  try {
    fields = elicitationFields(e.schema);
  } catch (error) {
    write(`  the form of MCP server ${clean(e.server)} cannot be shown (${clean((error as Error).message)}): declined\n`);
    return { action: "decline" };
  }
  write(`${renderElicitation(e, fields)}\n`);
  for (;;) {
    const line = await question(rl, "answer? ", signal);
    if (line === null) return null;
    const action = parseElicitationChoice(line);
    if (action && action !== "accept") return { action };
    if (action === "accept") break;
    write("  answer a (answer the form), d (decline) or c (cancel)\n");
  }
  const content: Record<string, ElicitValue> = {};
  for (const f of fields) {
    const hint = [describeField(f), f.required ? "required" : "optional", f.default !== undefined ? `Enter: ${String(f.default)}` : ""].filter(Boolean);
    write(`  ${clean(f.label)}${f.description ? ` — ${clean(f.description)}` : ""}\n`);
    for (;;) {
      const text = await question(rl, `  ${clean(f.name)} (${clean(hint.join(", "))}): `, signal);
      if (text === null) return null;
      const got = parseFieldInput(f, text);
      if (got.error) {
        write(`  ${clean(f.name)} ${got.error}\n`);
        continue;
      }
      if (got.value !== undefined) content[f.name] = got.value;
      break;
    }
  }
  return { action: "accept", content };
}
