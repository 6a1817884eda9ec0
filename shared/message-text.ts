import type { StoredMessage } from "./protocol/chat.js";

/**
 * A message's content as plain text, for a listing, a snippet or a search: text parts as they
 * are, an image as `[image]`, any other part left out; parts joined by `separator`. Used by the
 * daemon (search snippets, snapshots), the CLI (`sessions show`) and the TUI (chat, sessions), so
 * a message reads the same everywhere. The text is the model's or the user's: strip terminal
 * escapes (terminal-text.ts) before showing it.
 */
export function contentText(content: StoredMessage["content"] | undefined, separator = " "): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((p) => (p.type === "text" ? String(p.text ?? "") : p.type === "image_url" ? "[image]" : "")).join(separator);
}
