/**
 * The tools side of the agent runtime. The loop builds one registry per daemon:
 *   const tools = createToolRegistry();          // pool threads start on the first tool call
 *   await tools.execute("read_file", argsJson, ctx);
 *   await tools.close();                          // on daemon stop
 */
import { listFilesTool, patchTool, readFileTool, writeFileTool } from "./file-tools.js";
import { DefaultToolRegistry, type ToolDefinition, type ToolRegistryOptions } from "./registry.js";
import { searchFilesTool } from "./search-tools.js";
import { terminalTool } from "./terminal.js";
import { type VideoToolDeps, videoGenerateTool } from "./video/video-generate-tool.js";
import { type XSearchDeps, xSearchTool } from "./x-search-tool.js";

export function builtinTools(): ToolDefinition[] {
  return [readFileTool, writeFileTool, patchTool, listFilesTool, searchFilesTool, terminalTool];
}

/** The tools that call a vendor (video_generate, x_search); each is offered where its credential exists. */
export function vendorTools(deps: VideoToolDeps & XSearchDeps): ToolDefinition[] {
  return [videoGenerateTool(deps), xSearchTool(deps)];
}

export function createToolRegistry(options: ToolRegistryOptions = {}): DefaultToolRegistry {
  const { tools, ...rest } = options;
  return new DefaultToolRegistry(tools ?? builtinTools(), rest);
}

export { DefaultToolRegistry, defineTool, resolvePath, toParameters } from "./registry.js";
export type { LspDiagnosticsHook, LspHook, ToolDefinition, ToolDeps, ToolOutcome, ToolRegistryOptions } from "./registry.js";
export {
  failedEdits,
  failedEditsFooter,
  fileMutationVerifierEnabled,
  formatFailedEditsFooter,
  unresolvedFailedEdits,
  FOOTER_MAX_FILES,
} from "./failed-edits.js";
export type { MutationRecord } from "./failed-edits.js";
export { isMultimodalResult, multimodalResult } from "../../tools/multimodal.js";
export type * from "../../tools/types.js";
