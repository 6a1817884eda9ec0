import { formatOutput } from "../pool/tasks/output.js";
import { TOOL_OUTPUT_MAX } from "../tools/definition.js";
import { multimodalResult, type ImageInput } from "../tools/multimodal.js";
import type { ToolOutcome } from "../tools/definition.js";

type Content = { type: string; [k: string]: unknown };

/**
 * An MCP `tools/call` result as the model reads it: text parts joined; images as the
 * multimodal result shape (daemon/tools/multimodal.ts); resource links and embedded
 * resources as text lines; `isError` as ok: false. Text over the terminal tool's budget is cut
 * the way terminal output is (head and tail, the middle counted).
 */
export function mapCallResult(result: { content?: unknown; isError?: unknown; structuredContent?: unknown; toolResult?: unknown }): ToolOutcome {
  const parts: string[] = [];
  const images: ImageInput[] = [];
  const content = Array.isArray(result.content) ? (result.content as Content[]) : [];
  for (const c of content) {
    if (!c || typeof c !== "object") continue;
    if (c.type === "text" && typeof c.text === "string") parts.push(c.text);
    else if (c.type === "image" && typeof c.data === "string") images.push({ mime: typeof c.mimeType === "string" ? c.mimeType : "image/png", base64: c.data });
    else if (c.type === "resource_link")
      parts.push(`[resource link: ${String(c.name ?? c.uri)} ${String(c.uri)}${c.description ? ` — ${String(c.description)}` : ""}]`);
    else if (c.type === "resource" && c.resource && typeof c.resource === "object") {
      const r = c.resource as Record<string, unknown>;
      if (typeof r.text === "string") parts.push(`[resource ${String(r.uri)}]\n${r.text}`);
      else
        parts.push(
          `[resource ${String(r.uri)}: ${String(r.mimeType ?? "binary")}, ${typeof r.blob === "string" ? Math.floor((r.blob.length * 3) / 4) : 0} bytes, not shown]`,
        );
    } else if (c.type === "audio") parts.push(`[audio: ${String(c.mimeType ?? "audio")}, not shown]`);
  }
  if (!content.length && result.toolResult !== undefined) parts.push(JSON.stringify(result.toolResult));
  if (!parts.length && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  const text = cut(parts.join("\n"));
  const ok = result.isError !== true;
  if (images.length) {
    const note = `${text}${text ? "\n" : ""}(${images.length} image${images.length === 1 ? "" : "s"})`;
    return { ok, output: multimodalResult({ text: ok ? text || "(image)" : `error: ${text}`, images, summary: note }) };
  }
  return { ok, output: ok ? text : { error: text || "the tool reported an error without a message" } };
}

/** Cut like terminal output: the first and last halves of the budget, the bytes between counted. */
export function cut(text: string, max = TOOL_OUTPUT_MAX): string {
  const bytes = Buffer.from(text, "utf8");
  if (bytes.byteLength <= max) return text;
  const half = Math.floor(max / 2);
  const head = bytes.subarray(0, half);
  const tail = bytes.subarray(bytes.byteLength - half);
  return formatOutput({ kind: "format_output", head, tail, omittedBytes: bytes.byteLength - 2 * half }).output;
}
