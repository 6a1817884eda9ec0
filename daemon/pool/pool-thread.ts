/**
 * The tool thread (runs in tinypool, from dist/). One entry point dispatches on the task
 * kind declared in messages.ts. Expected failures come back as `{ ok: false }` values; anything
 * else thrown here is a bug and reaches the pool as a rejected task.
 */
import type { PoolTask, TaskKind, TaskOutcome, TaskValues } from "./messages.js";
import { ToolFailure } from "../../shared/errors.js";
import { listFiles, patchFile, readFile, writeFile } from "./tasks/files.js";
import { lint } from "./tasks/lint.js";
import { formatOutput } from "./tasks/output.js";
import { searchFiles } from "./tasks/search.js";

type Handlers = { [K in TaskKind]: (task: Extract<PoolTask, { kind: K }>) => Promise<TaskValues[K]> | TaskValues[K] };

const handlers: Handlers = {
  read_file: readFile,
  write_file: writeFile,
  patch: patchFile,
  list_files: listFiles,
  search_files: searchFiles,
  lint: (task) => lint(task.path, task.content),
  format_output: formatOutput,
};

export default async function run(task: PoolTask): Promise<TaskOutcome<TaskKind>> {
  const handler = handlers[task?.kind] as ((t: PoolTask) => Promise<TaskValues[TaskKind]> | TaskValues[TaskKind]) | undefined;
  if (!handler) throw new Error(`unknown task kind ${JSON.stringify(task?.kind)}`);
  try {
    return { ok: true, value: await handler(task) };
  } catch (error) {
    if (error instanceof ToolFailure) return { ok: false, error: { code: error.reason, message: error.message } };
    throw error;
  }
}
