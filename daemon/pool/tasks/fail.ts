/** Thrown inside a task for an expected failure; the worker turns it into `{ ok: false }`. */
export class TaskFail extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = "TaskFail";
    this.code = code;
  }
}

/** Map a Node fs error on `path` to a message the model can act on. */
export function fsFail(error: unknown, path: string): TaskFail {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "ENOENT":
      return new TaskFail("not_found", `file not found: ${path}`);
    case "EISDIR":
      return new TaskFail("is_directory", `${path} is a directory, not a file (use list_files to see its entries)`);
    case "ENOTDIR":
      return new TaskFail("not_found", `a parent of ${path} is not a directory`);
    case "EACCES":
    case "EPERM":
      return new TaskFail("permission_denied", `permission denied: ${path}`);
    default:
      return new TaskFail("io_error", `${path}: ${(error as Error)?.message ?? String(error)}`);
  }
}
