/**
 * How config files are written: through the daemon's one atomic write (store/atomic-file.ts),
 * synced to disk before the rename (they are rare writes of what the user typed), keeping an
 * existing file's mode and creating a new one as `mode`.
 */
import { writeFileAtomic as writeAtomic } from "../store/atomic-file.js";

export { keepBackup, readTextOrNull } from "../store/atomic-file.js";

export function writeFileAtomic(file: string, text: string, mode = 0o600): Promise<void> {
  return writeAtomic(file, text, { mode, fsync: true });
}
