import { randomBytes } from "node:crypto";
import { copyFile, open, readFile, rename, stat, unlink } from "node:fs/promises";

/** Read a text file; null when it does not exist. */
export async function readTextOrNull(file: string): Promise<string | null> {
  try {
    return await readFile(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * Replace a file atomically (temp file in the same folder, fsync, rename) so a crash leaves the
 * old or the new contents, never half of one. Keeps the old file's mode (else `mode`).
 */
export async function writeFileAtomic(file: string, text: string, mode = 0o600): Promise<void> {
  const keepMode = await stat(file).then((s) => s.mode & 0o777, () => mode);
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}.tmp`;
  const handle = await open(tmp, "wx", keepMode);
  try {
    await handle.writeFile(text, "utf8");
    await handle.sync();
  } finally {
    await handle.close();
  }
  try {
    await rename(tmp, file);
  } catch (error) {
    await unlink(tmp).catch(() => undefined);
    throw error;
  }
}

/** Copy `file` to `file.bak` (the previous version, kept for the user); null when there was no file. */
export async function keepBackup(file: string): Promise<string | null> {
  const bak = `${file}.bak`;
  try {
    await copyFile(file, bak);
    return bak;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}
