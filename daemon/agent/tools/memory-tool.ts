import { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import type { MemoryService } from "../memory/memory-service.js";
import type { MemoryEdit } from "../memory/store.js";
import { defineTool, type ToolDefinition } from "./registry.js";

/** `memory`: add, replace and remove entries of the profile's two memory stores. */
export function memoryTool(memory: MemoryService): ToolDefinition {
  return defineTool({
    name: "memory",
    description: [
      'Keep durable memory across sessions (this profile only). Two stores: target "memory" for your own notes (conventions, lessons, facts about the environment), target "user" for facts about the user (preferences, role, how they like to work).',
      "Actions: add {content}; replace {old_text, new_text} (old_text: a unique part of the entry); remove {old_text}.",
      "Each store has a size limit; when full, replace or remove entries first. Save only what will matter in later sessions, briefly. Changes show in the system prompt of the next session.",
    ].join(" "),
    toolset: "memory",
    args: z
      .object({
        action: z.enum(["add", "replace", "remove"]),
        target: z.enum(["memory", "user"]).default("memory"),
        content: z.string().max(10_000).optional().describe("add: the entry"),
        old_text: z.string().max(10_000).optional().describe("replace, remove: a unique part of the entry"),
        new_text: z.string().max(10_000).optional().describe("replace: the new entry"),
      })
      .strict(),
    // Per profile: a profile's config.yaml may turn memory off for its sessions only.
    requires: "memory.enabled: true for the profile (agent memory setup)",
    available: (ctx) => memory.offered(ctx.profile),
    async run(args, ctx) {
      if (!(await memory.enabled(ctx.profile))) throw new ToolFailure("disabled", "memory is turned off (agent memory setup turns it on)");
      let edit: MemoryEdit;
      if (args.action === "add") {
        if (args.content === undefined) throw new ToolFailure("invalid_arguments", "add needs content");
        edit = { action: "add", content: args.content };
      } else if (args.action === "replace") {
        if (args.old_text === undefined || args.new_text === undefined) throw new ToolFailure("invalid_arguments", "replace needs old_text and new_text");
        edit = { action: "replace", old_text: args.old_text, new_text: args.new_text };
      } else {
        if (args.old_text === undefined) throw new ToolFailure("invalid_arguments", "remove needs old_text");
        edit = { action: "remove", old_text: args.old_text };
      }
      const state = await memory.edit(ctx.profile, args.target, edit);
      return {
        ok: true,
        output: { target: state.name, entries: state.entries, usage: `${state.chars}/${state.limit} chars`, ...(state.note ? { note: state.note } : {}) },
      };
    },
  });
}
