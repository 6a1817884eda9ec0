import { createHash } from "node:crypto";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { ThreadItem } from "./protocol/v2/ThreadItem.js";

/**
 * A completed app-server item as session messages (only completed items are projected; deltas
 * are for the screen). Tool-like items become an assistant tool call and its tool result, with a
 * tool call id derived from the item id alone and arguments serialized with sorted keys, so the
 * same item always projects to the same messages. Kinds we do not model become one opaque note.
 */
export const PROJECTED_KINDS = ["userMessage", "agentMessage", "reasoning", "commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall"] as const;

/** JSON with object keys sorted at every depth. */
export function sortedJson(value: unknown): string {
  return JSON.stringify(sortKeys(value));
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value && typeof value === "object") {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as object).sort()) {
      const v = (value as Record<string, unknown>)[k];
      if (v !== undefined) out[k] = sortKeys(v);
    }
    return out;
  }
  return value;
}

/** The tool call id of an item: the same for the same item id, always. */
export function toolCallId(itemId: string): string {
  return `coder_${createHash("sha256").update(itemId).digest("hex").slice(0, 24)}`;
}

export interface Projected {
  messages: StoredMessage[];
  /** For the screen: a tool call and its result (null for plain messages). */
  tool: { id: string; name: string; args: unknown; ok: boolean; preview: string } | null;
  /** The assistant text of an agentMessage (the turn's answer is the last one). */
  text: string | null;
}

function toolPair(itemId: string, name: string, args: unknown, result: unknown, ok: boolean): Projected {
  const id = toolCallId(itemId);
  const content = typeof result === "string" ? result : sortedJson(result);
  return {
    messages: [
      { role: "assistant", content: null, tool_calls: [{ id, type: "function", function: { name, arguments: sortedJson(args ?? {}) } }] },
      { role: "tool", tool_call_id: id, name, content },
    ],
    tool: { id, name, args, ok, preview: content.slice(0, 400) },
    text: null,
  };
}

/** `prompt`: this turn's prompt; the server's echo of it is already in the transcript. */
export function projectItem(item: ThreadItem, prompt: string): Projected {
  const none: Projected = { messages: [], tool: null, text: null };
  switch (item.type) {
    case "userMessage": {
      const text = item.content
        .map((c) => (c.type === "text" ? c.text : ""))
        .filter(Boolean)
        .join("\n");
      if (text.trim() === prompt.trim()) return none;
      return { messages: [{ role: "user", content: text }], tool: null, text: null };
    }
    case "agentMessage":
      return { messages: [{ role: "assistant", content: item.text }], tool: null, text: item.text };
    case "reasoning": {
      const text = [...item.summary, ...item.content].join("\n").trim();
      if (!text) return none;
      return { messages: [{ role: "assistant", content: `(reasoning) ${text}` }], tool: null, text: null };
    }
    case "commandExecution":
      return toolPair(
        item.id,
        "terminal",
        { command: item.command, cwd: item.cwd },
        { exit_code: item.exitCode, output: item.aggregatedOutput ?? "", status: item.status },
        item.status === "completed" && (item.exitCode ?? 0) === 0,
      );
    case "fileChange":
      return toolPair(
        item.id,
        "patch",
        { changes: item.changes.map((c) => ({ diff: c.diff, kind: c.kind, path: c.path })) },
        { status: item.status },
        item.status === "completed",
      );
    case "mcpToolCall":
      return toolPair(
        item.id,
        `mcp_${item.server}_${item.tool}`,
        item.arguments,
        item.error ? { error: item.error } : (item.result ?? {}),
        !item.error && item.status === "completed",
      );
    case "dynamicToolCall":
      return toolPair(item.id, item.tool, item.arguments, { content: item.contentItems ?? [], status: item.status }, item.status === "completed");
    default: {
      const kind = (item as { type: string }).type;
      return {
        messages: [{ role: "assistant", content: `(coder runtime ${kind} item ${(item as { id?: string }).id ?? ""})`.trim() }],
        tool: null,
        text: null,
      };
    }
  }
}
