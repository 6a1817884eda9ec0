import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { WireMessage } from "../models/openai-chat.js";

/** Each image counts this many tokens in estimates (a fixed figure: the estimate never decodes the image). */
export const IMAGE_TOKEN_ESTIMATE = 1500;
/** Only this many of the most recent tool screenshots are sent to the model. */
export const RETAINED_SCREENSHOTS = 3;

type Part = Record<string, unknown>;

/**
 * Tool calls of an assistant message that have no tool result after it. A transcript cut off
 * by a crash can end like this; the API refuses such a history, so it is closed on the way out.
 */
export function danglingToolCalls(messages: StoredMessage[]): Array<{ index: number; ids: string[] }> {
  const out: Array<{ index: number; ids: string[] }> = [];
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i]!;
    if (m.role !== "assistant" || !m.tool_calls?.length) continue;
    const answered = new Set<string>();
    for (let j = i + 1; j < messages.length && messages[j]!.role === "tool"; j++) answered.add(messages[j]!.tool_call_id ?? "");
    const missing = m.tool_calls.map((c) => c.id).filter((id) => !answered.has(id));
    if (missing.length) out.push({ index: i, ids: missing });
  }
  return out;
}

/** The synthetic result that closes a tool call that never got one. */
export function cutOffResult(id: string, name: string, why: string, turnId?: string): StoredMessage {
  return { role: "tool", tool_call_id: id, name, content: JSON.stringify({ error: why }), synthetic: true, at: Date.now(), ...(turnId ? { turnId } : {}) };
}

/**
 * The transcript as the model sees it: bookkeeping stripped, dangling tool calls closed,
 * multimodal tool results split into a text tool message plus (when the provider takes images)
 * a user message with the image parts after the batch of tool results, and only the
 * `RETAINED_SCREENSHOTS` most recent tool images kept.
 */
export function closeDangling(history: StoredMessage[]): StoredMessage[] {
  const dangling = danglingToolCalls(history);
  if (!dangling.length) return history;
  const out = [...history];
  // From the end, so earlier indices stay valid while inserting.
  for (const d of dangling.reverse()) {
    let j = d.index + 1;
    while (j < out.length && out[j]!.role === "tool") j++;
    const calls = out[d.index]!.tool_calls!;
    out.splice(
      j,
      0,
      ...d.ids.map((id) =>
        cutOffResult(id, calls.find((c) => c.id === id)?.function.name ?? "tool", "no result: the turn was cut off before this tool call finished"),
      ),
    );
  }
  return out;
}

export function toWireMessages(system: string | null, history: StoredMessage[], options: { supportsImages: boolean }): WireMessage[] {
  history = closeDangling(history);
  // Which tool messages keep their images: the newest ones, up to the limit.
  const keepImages = new Set<number>();
  let budget = RETAINED_SCREENSHOTS;
  for (let i = history.length - 1; i >= 0 && budget > 0; i--) {
    const m = history[i]!;
    if (m.role === "tool" && m.multimodal && imageParts(m.multimodal.content).length) {
      const n = imageParts(m.multimodal.content).length;
      keepImages.add(i);
      budget -= n;
    }
  }
  const out: WireMessage[] = [];
  if (system) out.push({ role: "system", content: system });
  let pendingImages: Part[] = [];
  const flushImages = () => {
    if (pendingImages.length) out.push({ role: "user", content: pendingImages as never });
    pendingImages = [];
  };
  for (let i = 0; i < history.length; i++) {
    const m = history[i]!;
    if (m.role !== "tool") flushImages();
    switch (m.role) {
      case "system":
        out.push({ role: "system", content: textOf(m.content) });
        break;
      case "user":
        out.push({ role: "user", content: userContent(m.content, options.supportsImages) as never });
        break;
      case "assistant": {
        const msg: WireMessage = { role: "assistant", content: textOf(m.content) || (m.tool_calls?.length ? null : "") } as WireMessage;
        if (m.tool_calls?.length)
          (msg as { tool_calls?: unknown }).tool_calls = m.tool_calls.map((c) => ({
            id: c.id,
            type: "function",
            function: { name: c.function.name, arguments: c.function.arguments },
          }));
        out.push(msg);
        break;
      }
      case "tool": {
        let content: string;
        if (m.multimodal) {
          const images = imageParts(m.multimodal.content);
          const texts = m.multimodal.content.filter((p) => p.type === "text").map((p) => String(p.text ?? ""));
          if (options.supportsImages && images.length && keepImages.has(i)) {
            content = texts.join("\n") || m.multimodal.text_summary;
            pendingImages.push(
              { type: "text", text: `Image${images.length > 1 ? "s" : ""} returned by the ${m.name ?? "tool"} call ${m.tool_call_id}:` },
              ...images,
            );
          } else {
            content = m.multimodal.text_summary || texts.join("\n");
            if (images.length && options.supportsImages)
              content += `\n[${images.length} older image(s) omitted: only the ${RETAINED_SCREENSHOTS} most recent are kept]`;
          }
        } else content = textOf(m.content);
        out.push({ role: "tool", tool_call_id: m.tool_call_id ?? "", content });
        break;
      }
    }
  }
  flushImages();
  return out;
}

function imageParts(parts: Part[]): Part[] {
  return parts.filter((p) => p.type === "image_url");
}

function textOf(content: StoredMessage["content"]): string {
  if (content === null || content === undefined) return "";
  if (typeof content === "string") return content;
  return content
    .filter((p) => p.type === "text")
    .map((p) => String(p.text ?? ""))
    .join("\n");
}

function userContent(content: StoredMessage["content"], supportsImages: boolean): string | Part[] {
  if (typeof content === "string" || content === null) return content ?? "";
  if (supportsImages) return content;
  const images = imageParts(content).length;
  return textOf(content) + (images ? `\n[${images} image(s) attached; this model cannot see images]` : "");
}

/** A rough token estimate: 4 characters per token, `IMAGE_TOKEN_ESTIMATE` per image. */
export function estimateTokens(messages: Array<WireMessage | StoredMessage>): number {
  let chars = 0;
  let images = 0;
  const visit = (content: unknown) => {
    if (typeof content === "string") chars += content.length;
    else if (Array.isArray(content)) {
      for (const p of content as Part[]) {
        if (p.type === "image_url") images++;
        else if (typeof p.text === "string") chars += p.text.length;
      }
    }
  };
  for (const m of messages) {
    const sm = m as StoredMessage;
    if (sm.multimodal) visit(sm.multimodal.content);
    else visit(sm.content);
    for (const c of sm.tool_calls ?? []) chars += c.function.name.length + c.function.arguments.length;
    chars += 16; // role and framing
  }
  return Math.ceil(chars / 4) + images * IMAGE_TOKEN_ESTIMATE;
}
