import { readFile, rm } from "node:fs/promises";
import { join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { writeFileAtomic } from "../store/atomic-file.js";

/**
 * Long prompts (a pasted log): a turn travels through the session actor's queue, whose messages
 * hold at most 64 KiB, so a prompt over PROMPT_INLINE_BYTES is written beside the queue
 * (`data/agent/prompts/<turnId>.txt`) and the queued turn names it; the turn reads it when it
 * starts and removes it once the user message is in the transcript. A prompt over
 * MAX_PROMPT_BYTES is refused before any session is created or touched.
 */

/** The largest prompt a turn takes (bytes of UTF-8). */
export const MAX_PROMPT_BYTES = 1024 * 1024;
/** Prompts up to this many bytes ride in the queued turn itself. */
export const PROMPT_INLINE_BYTES = 32 * 1024;

export const promptDir = (data: string) => join(data, "agent", "prompts");

/** Refuse a prompt over the limit, naming it. */
export function checkPromptSize(prompt: string): void {
  const bytes = Buffer.byteLength(prompt);
  if (bytes > MAX_PROMPT_BYTES)
    throw new AgentError(
      "chat.prompt_too_large",
      `the prompt is ${bytes} bytes; a prompt may hold at most ${MAX_PROMPT_BYTES} bytes (1 MiB). Nothing was sent; attach a long file by path and let the agent read it`,
      { bytes, maxBytes: MAX_PROMPT_BYTES },
    );
}

/** Where a turn's spilled prompt lives. */
export const spilledPromptFile = (dir: string, turnId: string) => join(dir, `${turnId.replace(/[^\w-]/g, "_")}.txt`);

/** Write a long prompt beside the queue; returns whether it was spilled (the queued turn then carries no text). */
export async function spillPrompt(dir: string, turnId: string, prompt: string): Promise<boolean> {
  if (Buffer.byteLength(prompt) <= PROMPT_INLINE_BYTES) return false;
  await writeFileAtomic(spilledPromptFile(dir, turnId), prompt, { mode: 0o600 });
  return true;
}

export async function readSpilledPrompt(dir: string, turnId: string): Promise<string> {
  try {
    return await readFile(spilledPromptFile(dir, turnId), "utf8");
  } catch (error) {
    throw new AgentError("chat.turn_failed", `the prompt of turn ${turnId} is gone (${(error as NodeJS.ErrnoException).code ?? "unreadable"})`);
  }
}

export async function dropSpilledPrompt(dir: string, turnId: string): Promise<void> {
  await rm(spilledPromptFile(dir, turnId), { force: true });
}
