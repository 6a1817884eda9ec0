import { existsSync, readFileSync } from "node:fs";
import { chmod, mkdir, unlink } from "node:fs/promises";
import { homedir } from "node:os";
import { join } from "node:path";
import { writeFileAtomic } from "../store/atomic-file.js";

/**
 * A profile's alias: `~/.local/bin/<name>`, a two-line script running `agent --profile <name>`.
 * Only files carrying MARKER are ours: an unrelated file of the same name is never overwritten
 * or removed.
 */
const MARKER = "# agent profile alias";

export function aliasPath(name: string): string {
  return join(process.env.HOME?.trim() || homedir(), ".local", "bin", name);
}

function isOurs(file: string): boolean {
  try {
    return readFileSync(file, "utf8").includes(MARKER);
  } catch {
    return false;
  }
}

/** The alias's path when it exists and is ours. */
export function existingAlias(name: string): string | null {
  const file = aliasPath(name);
  return isOurs(file) ? file : null;
}

/** Write the alias; a note instead when another file already has its name. */
export async function writeAlias(name: string): Promise<{ path: string | null; note: string | null }> {
  const file = aliasPath(name);
  if (existsSync(file) && !isOurs(file))
    return { path: null, note: `${file} exists and is not an agent alias; left it alone (use \`agent --profile ${name}\`)` };
  await mkdir(join(file, ".."), { recursive: true });
  // Replaced whole (a shell never runs half of it), executable from the first byte.
  await writeFileAtomic(file, `#!/bin/sh\n${MARKER} (profile ${name})\nexec agent --profile ${name} "$@"\n`, { mode: 0o755 });
  await chmod(file, 0o755);
  return { path: file, note: null };
}

export async function removeAlias(name: string): Promise<boolean> {
  const file = existingAlias(name);
  if (!file) return false;
  await unlink(file);
  return true;
}

/** Move the alias along with a renamed profile (only when the old one is ours and the new name is free). */
export async function renameAlias(from: string, to: string): Promise<string | null> {
  const old = existingAlias(from);
  if (!old) return null;
  const target = aliasPath(to);
  await unlink(old);
  if (existsSync(target) && !isOurs(target)) return null;
  const written = await writeAlias(to);
  return written.path;
}
