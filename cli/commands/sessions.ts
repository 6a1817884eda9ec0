import { writeFileSync } from "node:fs";
import { terminalText } from "../../shared/terminal-text.js";
import { contentText } from "../../shared/message-text.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { HistoryMessage, SearchHitResult } from "../../shared/protocol/sessions.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult, table } from "../output.js";
import { withDaemon } from "../with-daemon.js";

const SPEC = {
  usage: "agent sessions <list|show|search|delete|export|reindex>",
  description: "Past sessions of the current profile (-p/--profile): list, read, search, delete, export; rebuild the search index.",
  flags: {
    allProfiles: { type: "boolean" },
    limit: { type: "number" },
    window: { type: "number" },
    kind: { type: "string" },
    from: { type: "number" },
    format: { type: "string" },
    output: { type: "string", shortFlag: "o" },
  },
  help: `Subcommands
  list [--limit <n>] [--kind chat|cron|kanban|messaging]   sessions, newest first
  show <id> [--from <n>] [--limit <n>]           a session's messages
  search <query> [--limit <n>] [--window <n>]    full-text search (stemmed; the last word is also a prefix)
  delete <id>                                    remove a session and its transcript
  export <id> [--format md|json] [-o <file>]     the session as Markdown (default) or JSON, to stdout or a file
  reindex                                        rebuild the search index from every transcript

Options
  --all-profiles   list or search the sessions of every profile (default: the current profile's)

Examples
  $ agent sessions search "deploy script" --limit 5
  $ agent -p writer sessions list --json
  $ agent sessions export s_20261122_1a2b3c4d --format json -o session.json`,
} as const;

const when = (ms: number | string) => new Date(ms).toISOString().slice(0, 16).replace("T", " ");

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const f = cli.flags;
  const one = (usage: string) => {
    if (args.length !== 1) throw new AgentError("usage.invalid", `${usage} takes one argument; usage: ${usage}`);
    return args[0]!;
  };
  const positive = (name: string, v: number | undefined) => {
    if (v !== undefined && (!Number.isInteger(v) || v < 1)) throw new AgentError("usage.invalid", `--${name} must be a positive integer`);
    return v;
  };
  const allProfiles = f.allProfiles ? { allProfiles: true } : {};
  switch (sub) {
    case "list": {
      if (args.length) throw new AgentError("usage.invalid", "agent sessions list takes no arguments");
      const limit = positive("limit", f.limit);
      if (f.kind !== undefined && !["chat", "cron", "kanban", "messaging"].includes(f.kind))
        throw new AgentError("usage.invalid", `--kind is chat, cron, kanban or messaging; got ${JSON.stringify(f.kind)}`);
      return withDaemon(env, async (client) => {
        const { sessions } = await client.call("sessions.list", {
          ...(limit ? { limit } : {}),
          ...allProfiles,
          ...(f.kind ? { kind: f.kind as "chat" | "cron" | "kanban" | "messaging" } : {}),
        });
        printResult({ sessions }, json, ({ sessions: s }) =>
          s.length
            ? table(
                ["SESSION", "KIND", ...(f.allProfiles ? ["PROFILE"] : []), "UPDATED", "MESSAGES", "PARENT", "TITLE"],
                s.map((x) => [
                  x.id,
                  x.kind,
                  ...(f.allProfiles ? [x.profile || "default"] : []),
                  when(x.updatedAt),
                  String(x.messageCount),
                  x.parentId ?? "-",
                  x.title,
                ]),
              )
            : "no sessions yet",
        );
        return EXIT.ok;
      });
    }
    case "show": {
      const sessionId = one("agent sessions show <id>");
      const from = f.from;
      if (from !== undefined && (!Number.isInteger(from) || from < 0)) throw new AgentError("usage.invalid", "--from must be a whole number (0 or more)");
      const limit = positive("limit", f.limit);
      return withDaemon(env, async (client) => {
        const r = await client.call("sessions.show", { sessionId, ...(from !== undefined ? { from } : {}), ...(limit ? { limit } : {}) });
        printResult(r, json, () =>
          [
            `${r.session.id}  ${r.session.kind}  ${r.session.title}`,
            `profile ${r.session.profile || "default"} · ${r.session.messageCount} messages · updated ${when(r.session.updatedAt)}${r.session.parentId ? ` · branched from ${r.session.parentId}` : ""}`,
            "",
            ...r.messages.map((m, i) => `[m${r.from + i}] ${m.role}: ${messageText(m)}`),
          ].join("\n"),
        );
        return EXIT.ok;
      });
    }
    case "search": {
      if (!args.length || !args.join(" ").trim())
        throw new AgentError("usage.invalid", "agent sessions search needs a query; usage: agent sessions search <query>");
      const query = args.join(" ");
      const limit = positive("limit", f.limit);
      const window = positive("window", f.window);
      return withDaemon(env, async (client) => {
        const { results } = await client.call("sessions.search", { query, ...(limit ? { limit } : {}), ...(window ? { window } : {}), ...allProfiles });
        printResult({ results }, json, ({ results: rs }) => (rs.length ? rs.map(renderHit).join("\n\n") : `no sessions match ${JSON.stringify(query)}`));
        return EXIT.ok;
      });
    }
    case "delete": {
      const sessionId = one("agent sessions delete <id>");
      return withDaemon(env, async (client) => {
        const r = await client.call("sessions.delete", { sessionId });
        printResult(r, json, () => `deleted session ${r.deleted}`);
        return EXIT.ok;
      });
    }
    case "export": {
      const sessionId = one("agent sessions export <id>");
      const format = f.format ?? "md";
      if (format !== "md" && format !== "json") throw new AgentError("usage.invalid", `--format is md or json; got ${JSON.stringify(format)}`);
      return withDaemon(env, async (client) => {
        const r = await client.call("sessions.export", { sessionId, format });
        if (f.output) {
          const path = resolve(f.output);
          writeFileSync(path, r.content);
          printResult({ path, format }, json, () => `exported ${sessionId} to ${path}`);
        } else if (json) printResult(format === "json" ? JSON.parse(r.content) : r, true, () => "");
        else {
          // A terminal gets the transcript without escape sequences; a pipe or a file gets it as stored.
          const text = process.stdout.isTTY ? terminalText(r.content) : r.content;
          process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
        }
        return EXIT.ok;
      });
    }
    case "reindex":
      if (args.length) throw new AgentError("usage.invalid", "agent sessions reindex takes no arguments");
      return withDaemon(env, async (client) => {
        const r = await client.call("sessions.reindex", {});
        printResult(r, json, () => `reindexed ${r.messages} messages of ${r.sessions} sessions in ${r.ms} ms`);
        return EXIT.ok;
      });
    case undefined:
      throw new AgentError("usage.missing_subcommand", "agent sessions needs a subcommand: list, show, search, delete, export or reindex");
    default:
      throw new AgentError("usage.invalid", `unknown subcommand "${sub}" for agent sessions; subcommands: list, show, search, delete, export, reindex`);
  }
}

/** How much of a tool call's arguments `sessions show` prints (the export has them whole). */
const ARGS_SHOWN = 300;

function messageText(m: Pick<StoredMessage, "content" | "tool_calls">): string {
  const text = contentText(m.content);
  const calls = (m.tool_calls ?? []).map((c) => `  ↳ ${terminalText(c.function.name)} ${toolArgs(c.function.arguments)}`.trimEnd());
  return [text, ...calls].filter(Boolean).join("\n");
}

/**
 * A tool call's arguments on one line: compact JSON when they parse, escape sequences stripped
 * (they are model text), cut at ARGS_SHOWN characters with the number left out.
 */
export function toolArgs(raw: string | undefined): string {
  if (!raw) return "";
  let text = raw;
  try {
    text = JSON.stringify(JSON.parse(raw));
  } catch {}
  text = terminalText(text).replace(/\s+/g, " ").trim();
  const chars = [...text];
  return chars.length > ARGS_SHOWN ? `${chars.slice(0, ARGS_SHOWN).join("")}… (${chars.length - ARGS_SHOWN} more characters)` : text;
}

const line = (m: HistoryMessage, mark = "") => `  ${mark}${m.id.padEnd(6)} ${m.role.padEnd(9)} ${m.text.replace(/\s+/g, " ").slice(0, 160)}`;

function renderHit(h: SearchHitResult): string {
  return [
    `${h.session_id}  ${h.kind}  ${h.updated_at.slice(0, 16).replace("T", " ")}  ${h.title}`,
    `  ${h.message_id}: ${h.snippet}`,
    ...h.window.map((m) => line(m, m.id === h.message_id ? "> " : "  ")),
  ].join("\n");
}
