/**
 * What a failed file write means to the user. The file system's errno becomes a `storage.*`
 * error that says what happened and which file ("disk full: cannot write ... (ENOSPC)"), so the
 * CLI, the gateway and daemon.log show the cause instead of "internal error". Anything else
 * passes unchanged.
 */
import type { ErrorCode } from "../../shared/error-codes.js";
import { AgentError } from "../../shared/errors.js";

const KINDS: Record<string, { code: ErrorCode; what: string }> = {
  ENOSPC: { code: "storage.disk_full", what: "disk full" },
  EDQUOT: { code: "storage.disk_full", what: "disk quota exceeded" },
  EACCES: { code: "storage.permission_denied", what: "permission denied" },
  EPERM: { code: "storage.permission_denied", what: "operation not permitted" },
  EROFS: { code: "storage.read_only", what: "read-only file system" },
};

/** The storage error for a failed write of `file` (any errno; an unexpected one is `storage.write_failed`), or `error` itself when it is not a file system error. */
export function toStorageError(error: unknown, file: string): unknown {
  if (error instanceof AgentError) return error;
  const errno = (error as NodeJS.ErrnoException | null)?.code;
  if (typeof errno !== "string" || !/^E[A-Z0-9]+$/.test(errno)) return error;
  const kind = KINDS[errno];
  if (!kind) return new AgentError("storage.write_failed", `cannot write ${file}: ${(error as Error).message}`, { file, errno }, { cause: error });
  return new AgentError(kind.code, `${kind.what}: cannot write ${file} (${errno})`, { file, errno }, { cause: error });
}

/** Whether `error` is a storage error (a write the disk refused). */
export function isStorageError(error: unknown): error is AgentError {
  return error instanceof AgentError && error.group === "storage";
}
