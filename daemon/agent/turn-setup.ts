import { randomBytes } from "node:crypto";
import { readFile, stat } from "node:fs/promises";
import { extname, isAbsolute } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";

/**
 * What every turn starts with, in the daemon's session workflow and in a kanban worker's own
 * process alike: ids, the title, the checked images, the user message and the system prompt.
 */

const MAX_IMAGE_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".gif": "image/gif", ".webp": "image/webp" };

export function newSessionId(): string {
  const d = new Date();
  const stamp = `${d.getUTCFullYear()}${String(d.getUTCMonth() + 1).padStart(2, "0")}${String(d.getUTCDate()).padStart(2, "0")}`;
  return `s_${stamp}_${randomBytes(4).toString("hex")}`;
}

export function newTurnId(): string {
  return `t_${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
}

/** A session's title: the prompt's first line, at most 60 characters. */
export function titleFrom(prompt: string): string {
  const line = prompt.trim().split("\n")[0] ?? "";
  return line.length > 60 ? `${line.slice(0, 57)}…` : line;
}

/**
 * The system prompt of a turn. Short: the tools describe themselves. `soul` is the profile's
 * SOUL.md (its persona), added after the base lines.
 */
export function systemPrompt(cwd: string | null, options: { kanbanTask?: string; soul?: string | null } = {}): string {
  return [
    "You are agent, a terminal-first assistant that gets things done with tools.",
    ...(options.kanbanTask ? kanbanWorkerLines(options.kanbanTask) : []),
    `${cwd ? `The working directory is ${cwd}. ` : ""}Today is ${new Date().toISOString().slice(0, 10)}.`,
    "Read files before you change them, make exact edits, and say plainly what you did. When a tool fails, read the error and decide what to do next.",
    ...(options.soul ? ["", "Your persona and standing instructions (this profile's SOUL.md):", "", options.soul] : []),
  ].join("\n");
}

/** How a kanban worker works its task (README "Kanban: dispatcher, workers, decomposer"). */
function kanbanWorkerLines(taskId: string): string[] {
  return [
    `You are working on a kanban task (${taskId}), started by the board's dispatcher; nobody reads your answer, the board is how you report.`,
    `1. Read the task with kanban_show (its title, body, comments, and the results of the tasks it depends on).`,
    "2. Do the work with your tools. On long work, call kanban_heartbeat every few minutes so the board knows you are alive.",
    "3. End with exactly one of: kanban_complete with a summary (and the result, if the task asks for one) when the work is done; kanban_block with the reason when you cannot go on without a human or something outside your reach.",
    "4. kanban_comment leaves a note on any task (yours or another); kanban_list shows the board.",
    "Ending your turn without kanban_complete or kanban_block is a protocol violation: the task is blocked for a human to look at.",
    "If your task has children (it was split into them), you are the orchestrator judging it: read their results with kanban_show, then complete the task with a summary of the whole when together they achieve it, or block it saying what is missing.",
  ];
}

/**
 * The system prompt with the profile's sections after it (the skills index and the memory block,
 * daemon/agent/skills/skills-service.ts), each separated by a blank line.
 */
export function withSections(prompt: string, sections: readonly string[]): string {
  return [prompt, ...sections].join("\n\n");
}

/** An attached image: an absolute path to a PNG, JPEG, GIF or WebP file of at most 20 MiB. */
export async function checkImage(path: string): Promise<string> {
  if (!isAbsolute(path)) throw new AgentError("chat.invalid_image", `image paths must be absolute: ${path}`);
  if (!IMAGE_TYPES[extname(path).toLowerCase()]) throw new AgentError("chat.invalid_image", `${path} is not a PNG, JPEG, GIF or WebP image`);
  let size: number;
  try {
    size = (await stat(path)).size;
  } catch {
    throw new AgentError("chat.image_not_found", `no image at ${path}`);
  }
  if (size > MAX_IMAGE_BYTES) throw new AgentError("chat.invalid_image", `${path} is larger than ${MAX_IMAGE_BYTES / 1024 / 1024} MiB`);
  return path;
}

async function imageDataUrl(path: string): Promise<string> {
  const type = IMAGE_TYPES[extname(path).toLowerCase()] ?? "application/octet-stream";
  return `data:${type};base64,${(await readFile(path)).toString("base64")}`;
}

/** The turn's user message: the prompt, and the (checked) images as data URLs. */
export async function userMessage(turnId: string, prompt: string, imagePaths: string[]): Promise<StoredMessage> {
  const images = await Promise.all(imagePaths.map(imageDataUrl));
  const content: StoredMessage["content"] = images.length
    ? [{ type: "text", text: prompt }, ...images.map((url) => ({ type: "image_url", image_url: { url } }))]
    : prompt;
  return { role: "user", content, at: Date.now(), turnId };
}
