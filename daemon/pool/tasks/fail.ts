import { ToolFailure } from "../../../shared/errors.js";

/** Map a Node fs error on `path` to a message the model can act on. */
export function fsFail(error: unknown, path: string): ToolFailure {
  const code = (error as NodeJS.ErrnoException)?.code;
  switch (code) {
    case "ENOENT":
      return new ToolFailure("not_found", `file not found: ${path}`);
    case "EISDIR":
      return new ToolFailure("is_directory", `${path} is a directory, not a file (use list_files to see its entries)`);
    case "ENOTDIR":
      return new ToolFailure("not_found", `a parent of ${path} is not a directory`);
    case "EACCES":
    case "EPERM":
      return new ToolFailure("permission_denied", `permission denied: ${path}`);
    default:
      return new ToolFailure("io_error", `${path}: ${(error as Error)?.message ?? String(error)}`);
  }
}
