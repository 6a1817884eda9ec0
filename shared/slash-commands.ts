/**
 * Every slash command of the chat, declared once. `/help` and tab completion are generated
 * from this table; the CLI and the TUI map `handler` ids to what they do.
 */
export interface SlashCommand {
  name: string;
  aliases: readonly string[];
  /** Argument synopsis for help, e.g. "<path>" or "[--delete|-d]". */
  args: string;
  summary: string;
  handler: SlashHandlerId;
  /** Flags the command accepts; anything else starting with "-" gets a hint. */
  flags?: readonly string[];
  /** Whether a positional argument is required. */
  needsArg?: boolean;
}

export type SlashHandlerId =
  | "exit"
  | "image"
  | "debug"
  | "reload"
  | "restart"
  | "btw"
  | "fast"
  | "snapshot"
  | "statusbar"
  | "gquota"
  | "help"
  | "sessions"
  | "branch"
  | "skills"
  | "bundles"
  | "reload-skills"
  | "cron"
  | "yolo"
  | "mcp"
  | "handoff";

export const SLASH_COMMANDS: readonly SlashCommand[] = Object.freeze([
  {
    name: "exit",
    aliases: ["quit"],
    args: "[--delete|-d]",
    summary: "leave the chat; --delete also removes this session and its transcripts",
    handler: "exit",
    flags: ["--delete", "-d"],
  },
  { name: "image", aliases: [], args: "<path>", summary: "attach an image to the next prompt", handler: "image", needsArg: true },
  { name: "debug", aliases: [], args: "", summary: "toggle showing tool arguments, results and timings", handler: "debug" },
  { name: "reload", aliases: [], args: "", summary: "reload config.yaml and .env", handler: "reload" },
  { name: "restart", aliases: [], args: "", summary: "restart the daemon and reattach to this session", handler: "restart" },
  {
    name: "btw",
    aliases: [],
    args: "<question>",
    summary: "a side question answered from the current context, not added to the history",
    handler: "btw",
    needsArg: true,
  },
  { name: "fast", aliases: [], args: "", summary: "toggle the fast model (model.fast) for the next turns", handler: "fast" },
  { name: "snapshot", aliases: [], args: "[name]", summary: "write this session as Markdown to $AGENT_HOME/snapshots/", handler: "snapshot" },
  { name: "statusbar", aliases: [], args: "", summary: "toggle the status line", handler: "statusbar" },
  { name: "gquota", aliases: [], args: "", summary: "rate-limit quota per model and token type, from the provider's headers", handler: "gquota" },
  { name: "sessions", aliases: [], args: "[n|id]", summary: "list recent sessions; /sessions <n|id> resumes one", handler: "sessions" },
  {
    name: "branch",
    aliases: ["fork"],
    args: "[name]",
    summary: "continue in a new session with this history copied, linked to this one",
    handler: "branch",
  },
  { name: "skills", aliases: [], args: "", summary: "list this profile's skills (/<skill-name> loads one)", handler: "skills" },
  { name: "bundles", aliases: [], args: "", summary: "list the skill bundles (/<bundle-name> loads all its skills)", handler: "bundles" },
  { name: "reload-skills", aliases: [], args: "", summary: "rescan the skills folder (it is also watched)", handler: "reload-skills" },
  {
    name: "cron",
    aliases: [],
    args: "[list|run <id>|pause <id>|resume <id>|logs <id>]",
    summary: "this profile's scheduled jobs (agent cron adds and edits them)",
    handler: "cron",
  },
  { name: "yolo", aliases: [], args: "", summary: "toggle approvals off for this session (risky tool calls run unasked)", handler: "yolo" },
  { name: "mcp", aliases: [], args: "", summary: "this profile's MCP servers: state, tool count, last error (agent mcp manages them)", handler: "mcp" },
  {
    name: "handoff",
    aliases: [],
    args: "<platform> [chat]",
    summary: "continue this session in a messaging chat (default: the platform's last chat)",
    handler: "handoff",
    needsArg: true,
  },
  { name: "help", aliases: ["?"], args: "", summary: "this list", handler: "help" },
] satisfies SlashCommand[]);

export type SlashParse =
  | { kind: "none" }
  | { kind: "command"; command: SlashCommand; args: string; flags: string[] }
  | { kind: "error"; message: string }
  /** A name that is no built-in command: the daemon may know it as a skill or bundle; `hint` is what to say when it does not. */
  | { kind: "forward"; name: string; args: string; hint: string };

/** Find a command by name or alias (without the slash). */
export function findSlashCommand(name: string): SlashCommand | undefined {
  const n = name.toLowerCase();
  return SLASH_COMMANDS.find((c) => c.name === n || c.aliases.includes(n));
}

/**
 * Parse one input line. `none` for an ordinary prompt; `error` carries the hint to print for an
 * unknown command, an unknown flag or a missing argument (the chat keeps running).
 */
export function parseSlash(line: string): SlashParse {
  const trimmed = line.trim();
  if (!trimmed.startsWith("/") || trimmed.startsWith("//")) return { kind: "none" };
  const m = /^\/(\S*)\s*(.*)$/s.exec(trimmed)!;
  const name = m[1]!;
  const rest = m[2]!.trim();
  const command = findSlashCommand(name);
  if (!command) {
    const near = nearest(name);
    const message = `unknown command /${name}${near ? ` (did you mean /${near}?)` : ""}; type /help for the list`;
    // Skill and bundle names are slugs; anything else cannot be one.
    if (/^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/.test(name)) return { kind: "forward", name, args: rest, hint: message };
    return { kind: "error", message };
  }
  const words = rest ? rest.split(/\s+/) : [];
  const flags = words.filter((w) => /^-{1,2}[A-Za-z]/.test(w));
  if (command.flags) {
    const bad = flags.find((f) => !command.flags!.includes(f));
    if (bad) return { kind: "error", message: `/${command.name} does not take ${bad}; usage: /${command.name} ${command.args}` };
    if (words.length !== flags.length) {
      const extra = words.find((w) => !flags.includes(w));
      return { kind: "error", message: `/${command.name} does not take "${extra}"; usage: /${command.name} ${command.args}` };
    }
  }
  const args = command.flags ? "" : rest;
  if (command.needsArg && !args) return { kind: "error", message: `/${command.name} needs an argument: /${command.name} ${command.args}` };
  return { kind: "command", command, args, flags: command.flags ? flags : [] };
}

/** Tab completion for a line: candidates for the word being typed. */
export function completeSlash(line: string): [string[], string] {
  if (!line.startsWith("/") || /\s/.test(line)) return [[], line];
  const names = SLASH_COMMANDS.flatMap((c) => [c.name, ...c.aliases]).map((n) => `/${n}`);
  const hits = names.filter((n) => n.startsWith(line.toLowerCase()));
  return [hits.length ? hits : names, line];
}

/** The /help text. */
export function slashHelp(): string {
  const { rows, notes } = slashHelpParts();
  const width = Math.max(...rows.map((r) => r[0].length));
  return ["Commands:", ...rows.map(([a, b]) => `  ${a.padEnd(width)}  ${b}`), ...notes].join("\n");
}

/** The parts of /help: a row per command (its names and arguments, what it does), then the closing notes. */
export function slashHelpParts(): { rows: Array<readonly [string, string]>; notes: string[] } {
  return {
    rows: SLASH_COMMANDS.map((c) => {
      const names = [c.name, ...c.aliases].map((n) => `/${n}`).join(", ");
      return [`${names}${c.args ? ` ${c.args}` : ""}`, c.summary] as const;
    }),
    notes: [
      "/<skill-name> loads a skill, /<bundle-name> every skill of a bundle, into the conversation (text after the name goes with it).",
      "Anything else is sent to the model. Ctrl-C interrupts a running turn; Ctrl-D leaves.",
    ],
  };
}

function nearest(name: string): string | null {
  let best: string | null = null;
  let bestD = Infinity;
  for (const c of SLASH_COMMANDS) {
    for (const n of [c.name, ...c.aliases]) {
      const d = distance(name.toLowerCase(), n);
      if (d < bestD) {
        bestD = d;
        best = c.name;
      }
    }
  }
  return bestD <= 2 ? best : null;
}

function distance(a: string, b: string): number {
  const dp = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)] as number[]);
  for (let j = 1; j <= b.length; j++) dp[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) dp[i]![j] = Math.min(dp[i - 1]![j]! + 1, dp[i]![j - 1]! + 1, dp[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
  return dp[a.length]![b.length]!;
}

/** Quota buckets as progress bars (used/limit), for /gquota in the CLI and the TUI. */
export function renderQuota(
  buckets: Array<{ model: string; provider: string; type: string; limit: number | null; remaining: number | null; reset: string | null; at: number }>,
  width = 24,
): string {
  if (!buckets.length)
    return "No quota data yet: the provider has sent no x-ratelimit-* headers in this daemon's lifetime (send a prompt first; some providers never send them).";
  const lines: string[] = [];
  let model = "";
  for (const b of buckets) {
    if (b.model !== model) {
      model = b.model;
      lines.push(`${b.model} (${b.provider})`);
    }
    if (b.limit === null || b.remaining === null || b.limit <= 0) {
      lines.push(`  ${b.type.padEnd(14)} ${b.remaining ?? "?"} remaining of ${b.limit ?? "?"}`);
      continue;
    }
    const used = Math.max(0, b.limit - b.remaining);
    const filled = Math.round((used / b.limit) * width);
    const pct = Math.round((used / b.limit) * 100);
    lines.push(
      `  ${b.type.padEnd(14)} [${"#".repeat(filled)}${".".repeat(width - filled)}] ${used}/${b.limit} used (${pct}%)${b.reset ? `, resets in ${b.reset}` : ""}`,
    );
  }
  return lines.join("\n");
}
