import type { SessionSummary, StoredMessage } from "../../shared/protocol/chat.js";
import { contentText } from "../../shared/message-text.js";

const MAX_TOOL_OUTPUT = 4000;

/** A session as Markdown, for `/snapshot`. Images are noted, not embedded. */
export function renderSnapshot(session: SessionSummary, messages: StoredMessage[]): string {
  const out: string[] = [
    `# ${session.title || session.id}`,
    "",
    `- session: ${session.id}`,
    `- model: ${session.model || "?"} (${session.provider || "?"})`,
    `- created: ${new Date(session.createdAt).toISOString()}`,
    `- messages: ${messages.length}`,
    `- tokens: ${session.usage.total}`,
    "",
  ];
  for (const m of messages) {
    const text = textOf(m);
    switch (m.role) {
      case "user":
        out.push("## User", "", text, "");
        break;
      case "assistant":
        out.push("## Assistant", "");
        if (text) out.push(text, "");
        for (const c of m.tool_calls ?? []) out.push(`> tool call \`${c.function.name}\` ${c.function.arguments}`, "");
        break;
      case "tool": {
        const body = text.length > MAX_TOOL_OUTPUT ? `${text.slice(0, MAX_TOOL_OUTPUT)}\n… (${text.length - MAX_TOOL_OUTPUT} more characters)` : text;
        out.push(`### Tool result (${m.name ?? m.tool_call_id})`, "", "```", body.replace(/```/g, "`\u200b``"), "```", "");
        break;
      }
      case "system":
        out.push("## System", "", text, "");
    }
  }
  return out.join("\n");
}

function textOf(m: StoredMessage): string {
  if (m.multimodal) return m.multimodal.text_summary;
  return contentText(m.content, "\n");
}
