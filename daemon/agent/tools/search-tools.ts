import { z } from "zod";
import { defineTool, resolvePath } from "./registry.js";

export const searchFilesTool = defineTool({
  name: "search_files",
  toolset: "search",
  description:
    "Search file contents with a regular expression (JavaScript syntax), line by line, over a file or a directory tree. Honours .gitignore; skips .git, node_modules, binary files and files over 2 MB.",
  args: z.object({
    pattern: z.string().min(1, "pattern must not be empty").describe("Regular expression to look for in each line"),
    path: z.string().optional().describe("File or directory to search (default: the working directory)"),
    glob: z.string().optional().describe("Only files matching this gitignore-style pattern, e.g. *.ts or src/**/*.py (comma-separate several)"),
    max_results: z.number().int().min(1).max(1_000).optional().describe("Maximum matches to return (default 100)"),
  }),
  async run(args, ctx, deps) {
    const value = await deps.runTask(
      { kind: "search_files", path: resolvePath(args.path || ".", ctx), pattern: args.pattern, glob: args.glob, maxResults: args.max_results ?? 100 },
      ctx.signal,
    );
    return { ok: true, output: value.truncated ? { ...value, note: "more matches exist; narrow the pattern, path or glob, or raise max_results" } : value };
  },
});
