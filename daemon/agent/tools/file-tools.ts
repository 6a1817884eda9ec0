import { z } from "zod";
import type { WriteValue } from "../../pool/messages.js";
import { multimodalResult } from "../../tools/multimodal.js";
import { defineTool, resolvePath, type ToolDeps, type ToolOutcome } from "./registry.js";
import type { LspPendingDiagnostics } from "../../../shared/protocol/lsp.js";
import type { ToolContext } from "../../tools/types.js";
import { readFile } from "node:fs/promises";
import type { ApprovalAsk } from "../../../shared/protocol/approvals.js";
import { writeDiff } from "../../tools/write-diff.js";

/** The approval question of a write: the target and a diff of the change. */
async function writeAsk(tool: string, path: string, after: (before: string | null) => string): Promise<ApprovalAsk> {
  const before = await readFile(path, "utf8").catch(() => null);
  return { kind: "file_write", tool, summary: `${tool} ${path}`, details: { path, diff: writeDiff(before, after(before)) } };
}

export const READ_DEFAULT_LIMIT = 2_000;
const LIST_MAX_ENTRIES = 1_000;

const pathArg = z.string().min(1, "path must not be empty");

function pathOf(raw: Record<string, unknown>, ctx: ToolContext): string | undefined {
  return typeof raw.path === "string" && raw.path !== "" ? resolvePath(raw.path, ctx) : undefined;
}

/**
 * Runs a write or patch with the language-server tier around it: the baseline is taken before
 * the write (the old content is read first, so the server checks it while the write runs).
 */
async function mutate(path: string, ctx: ToolContext, deps: ToolDeps, write: () => Promise<WriteValue>): Promise<ToolOutcome> {
  const pending = deps.lsp ? await deps.lsp.beforeWrite(path, ctx.signal).catch(() => undefined) : undefined;
  let value: WriteValue;
  try {
    value = await write();
  } catch (error) {
    pending?.cancel();
    throw error;
  }
  return mutationOutcome(value, ctx, deps, pending);
}

/** Write/patch result for the model, plus LSP diagnostics when the syntax check was clean. */
async function mutationOutcome(value: WriteValue, ctx: ToolContext, deps: ToolDeps, pending?: LspPendingDiagnostics): Promise<ToolOutcome> {
  const output: WriteValue & { lsp_diagnostics?: string; lsp_note?: string } = { ...value };
  if (pending) {
    // The syntax check runs first; the language server is consulted only when it is clean.
    const diagnostics = await pending.after(value.lint.status !== "error").catch(() => undefined);
    if (diagnostics) output.lsp_diagnostics = diagnostics;
    // No diagnostics because the server is missing, installing or starting: say so, not nothing.
    const note = value.lint.status !== "error" ? pending.note?.() : undefined;
    if (note) output.lsp_note = note;
  } else if (value.lint.status !== "error" && deps.lspDiagnostics) {
    const diagnostics = await deps.lspDiagnostics(value.path, ctx).catch(() => undefined);
    if (diagnostics) output.lsp_diagnostics = diagnostics;
  }
  return { ok: true, output, mutation: { path: value.path, ok: true } };
}

export const readFileTool = defineTool({
  name: "read_file",
  toolset: "file",
  description:
    "Read a text file; lines come back numbered (number, tab, text). Use offset and limit to page through long files. Images (png, jpg, gif, webp) are shown to you as images.",
  args: z.object({
    path: pathArg.describe("File to read, absolute or relative to the working directory"),
    offset: z.number().int().min(1).optional().describe("First line to read (1-based; default 1)"),
    limit: z.number().int().min(1).max(10_000).optional().describe(`Number of lines to read (default ${READ_DEFAULT_LIMIT})`),
  }),
  async run(args, ctx, deps) {
    const path = resolvePath(args.path, ctx);
    const value = await deps.runTask({ kind: "read_file", path, offset: args.offset ?? 1, limit: args.limit ?? READ_DEFAULT_LIMIT }, ctx.signal);
    if (value.type === "image") {
      const text = `Image ${path} (${value.mime}, ${value.bytes} bytes).`;
      return {
        ok: true,
        output: multimodalResult({
          text,
          images: [{ mime: value.mime, base64: value.base64 }],
          summary: `${text} The current model cannot view images, so its content is not available.`,
        }),
      };
    }
    const { type: _type, ...rest } = value;
    return { ok: true, output: rest };
  },
});

export const writeFileTool = defineTool({
  name: "write_file",
  toolset: "file",
  description:
    "Create or overwrite a file with the given content (parent directories are created). The result reports bytes_written and a syntax check (lint) of JSON, YAML, JavaScript/TypeScript and Python files.",
  args: z.object({
    path: pathArg.describe("File to write, absolute or relative to the working directory"),
    content: z.string().describe("The complete new content of the file"),
  }),
  mutationPath: pathOf,
  approval: (args, ctx) => writeAsk("write_file", resolvePath(args.path, ctx), () => args.content),
  async run(args, ctx, deps) {
    const path = resolvePath(args.path, ctx);
    return mutate(path, ctx, deps, () => deps.runTask({ kind: "write_file", path, content: args.content }, ctx.signal));
  },
});

export const patchTool = defineTool({
  name: "patch",
  toolset: "file",
  description:
    "Edit a file by replacing one exact occurrence of `search` with `replace`. The search text must appear exactly once (copy it from read_file output without the line numbers, whitespace included); otherwise nothing changes and the error says why. The result reports bytes_written and a syntax check (lint).",
  args: z.object({
    path: pathArg.describe("File to edit, absolute or relative to the working directory"),
    search: z.string().min(1, "search must not be empty").describe("Exact text to find; must occur exactly once"),
    replace: z.string().describe("Text to put in its place"),
  }),
  mutationPath: pathOf,
  // The diff shows the replacement where it would land (a search text that is absent fails in run).
  approval: (args, ctx) =>
    writeAsk("patch", resolvePath(args.path, ctx), (before) =>
      before?.includes(args.search) ? before.replace(args.search, () => args.replace) : (before ?? ""),
    ),
  async run(args, ctx, deps) {
    const path = resolvePath(args.path, ctx);
    return mutate(path, ctx, deps, () => deps.runTask({ kind: "patch", path, search: args.search, replace: args.replace }, ctx.signal));
  },
});

export const listFilesTool = defineTool({
  name: "list_files",
  toolset: "file",
  description: "List a directory's files and subdirectories (directories end with /), honouring .gitignore and skipping .git and node_modules.",
  args: z.object({
    path: z.string().optional().describe("Directory to list (default: the working directory)"),
    depth: z.number().int().min(1).max(10).optional().describe("How many levels deep to list (default 2)"),
  }),
  async run(args, ctx, deps) {
    const value = await deps.runTask(
      { kind: "list_files", path: resolvePath(args.path || ".", ctx), depth: args.depth ?? 2, maxEntries: LIST_MAX_ENTRIES },
      ctx.signal,
    );
    return {
      ok: true,
      output: value.truncated ? { ...value, note: `only the first ${LIST_MAX_ENTRIES} entries are listed; list a subdirectory or lower depth` } : value,
    };
  },
});
