/**
 * What an acknowledged write survives (config `storage.durability`, README "Durable means"):
 * `process` (the default): the kernel has it, so a crash or `kill -9` loses nothing, but a
 * power cut can lose the writes of the last seconds; `power`: it is fsynced before it is
 * acknowledged. Held here, set from the config at start and on reload, and asked by every
 * writer at the moment it writes. Group-committed journals sync once per batch, not per write.
 */
import { closeSync, fsyncSync, openSync } from "node:fs";
import { open } from "node:fs/promises";

export type Durability = "process" | "power";
export const DURABILITY_MODES: readonly Durability[] = ["process", "power"];

let mode: Durability = "process";

export function setDurability(next: Durability): void {
  if (!DURABILITY_MODES.includes(next)) throw new Error(`unknown storage durability "${next}"`);
  mode = next;
}

export function durability(): Durability {
  return mode;
}

/** Whether a write must be fsynced before it is acknowledged. */
export function syncsWrites(): boolean {
  return mode === "power";
}

/** fsync an open file when the policy asks for it. */
export function syncFd(fd: number): void {
  if (mode === "power") fsyncSync(fd);
}

/**
 * fsync a directory, so a rename or a new file in it survives a power cut. Errors other than
 * the file system refusing to sync a directory (EINVAL, EISDIR on some) are thrown.
 */
export function syncDirSync(dir: string): void {
  const fd = openSync(dir, "r");
  try {
    fsyncSync(fd);
  } catch (error) {
    if (!isDirSyncUnsupported(error)) throw error;
  } finally {
    closeSync(fd);
  }
}

export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, "r");
  try {
    await handle.sync();
  } catch (error) {
    if (!isDirSyncUnsupported(error)) throw error;
  } finally {
    await handle.close();
  }
}

function isDirSyncUnsupported(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code;
  return code === "EINVAL" || code === "EISDIR" || code === "ENOTSUP";
}
