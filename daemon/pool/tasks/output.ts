import type { FormatOutputValue, TaskOf } from "../messages.js";

// CSI / OSC escape sequences and stray control characters: noise to a model.
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

function clean(bytes: Uint8Array): string {
  // A cut multi-byte character at a buffer edge decodes as U+FFFD instead of failing.
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("utf8").replace(ANSI, "").replace(/\r\n/g, "\n").replace(/\r/g, "\n");
}

/** A terminal command's captured output (head and tail kept by the daemon) made readable. */
export function formatOutput(task: TaskOf<"format_output">): FormatOutputValue {
  const head = clean(task.head);
  if (task.omittedBytes === 0 && task.tail.byteLength === 0) return { output: head };
  const tail = clean(task.tail);
  const note = task.omittedBytes > 0 ? `\n\n[… output truncated: ${task.omittedBytes} bytes omitted from the middle …]\n\n` : "";
  return { output: head + note + tail };
}
