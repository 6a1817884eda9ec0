import type { ContentPart, MultimodalResult } from "./types.js";

export interface ImageInput {
  mime: string;
  /** Base64 of the image bytes. */
  base64: string;
  detail?: "auto" | "low" | "high";
}

/**
 * A tool result the model can see: a text part, then one image_url part (data URL) per image.
 * `summary` is what a provider that cannot take images gets instead (defaults to the text).
 */
export function multimodalResult(options: { text: string; images: ImageInput[]; summary?: string }): MultimodalResult {
  const content: ContentPart[] = [{ type: "text", text: options.text }];
  for (const image of options.images) {
    content.push({ type: "image_url", image_url: { url: `data:${image.mime};base64,${image.base64}`, ...(image.detail ? { detail: image.detail } : {}) } });
  }
  return { _multimodal: true, content, text_summary: options.summary ?? options.text };
}

export function isMultimodalResult(value: unknown): value is MultimodalResult {
  return Boolean(
    value && typeof value === "object" && (value as { _multimodal?: unknown })._multimodal === true && Array.isArray((value as { content?: unknown }).content),
  );
}
