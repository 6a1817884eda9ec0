import { terminalText } from "../../../shared/terminal-text.js";
import type { FormatOutputValue, TaskOf } from "../messages.js";

/**
 * Escape sequences and stray controls are noise to a model and must not reach a terminal that
 * shows the output: the one stripper (shared/terminal-text.ts) removes them, DCS/SOS/PM/APC
 * string bodies included, and turns carriage returns into newlines.
 */
function clean(bytes: Uint8Array): string {
  // A cut multi-byte character at a buffer edge decodes as U+FFFD instead of failing.
  return terminalText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8"));
}

/** A terminal command's captured output (head and tail kept by the daemon) made readable. */
export function formatOutput(task: TaskOf<"format_output">): FormatOutputValue {
  const head = clean(task.head);
  if (task.omittedBytes === 0 && task.tail.byteLength === 0) return { output: head };
  const tail = clean(task.tail);
  const note = task.omittedBytes > 0 ? `\n\n[… output truncated: ${task.omittedBytes} bytes omitted from the middle …]\n\n` : "";
  return { output: head + note + tail };
}
