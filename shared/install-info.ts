/**
 * Where this copy of the application is installed and what it is: the folder holding its
 * package.json (the repository root in a git install, the package folder in an npm install), and
 * the git commit it was started from. Read from files only (no process is started), so the
 * daemon can stamp its status with the commit it runs at start at no cost.
 */
import { existsSync, readFileSync, statSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The application's root: the nearest folder above this module with our package.json (dist/shared/ or shared/ under tsx). */
export function appRoot(from: string = fileURLToPath(import.meta.url)): string {
  let dir = dirname(from);
  for (let i = 0; i < 6; i++) {
    if (existsSync(join(dir, "package.json"))) return dir;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return resolve(dirname(from), "..", "..");
}

/** The name and version of the package.json at `root` (nulls when unreadable). */
export function packageInfo(root: string): { name: string | null; version: string | null } {
  try {
    const p = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
    return { name: typeof p.name === "string" ? p.name : null, version: typeof p.version === "string" ? p.version : null };
  } catch {
    return { name: null, version: null };
  }
}

const read = (file: string): string | null => {
  try {
    return readFileSync(file, "utf8").trim();
  } catch {
    return null;
  }
};

/**
 * The commit checked out at `root` when `root` is the top of a git work tree (its own `.git`
 * folder, or a `.git` file pointing at a worktree's git dir), else null. Follows a symbolic HEAD
 * through loose refs, then packed-refs.
 */
export function gitCommitAt(root: string): string | null {
  const dotGit = join(root, ".git");
  const st = statSync(dotGit, { throwIfNoEntry: false });
  if (!st) return null;
  let gitDir = dotGit;
  if (st.isFile()) {
    const pointer = /^gitdir:\s*(.+)$/m.exec(read(dotGit) ?? "")?.[1]?.trim();
    if (!pointer) return null;
    gitDir = isAbsolute(pointer) ? pointer : resolve(root, pointer);
  }
  const head = read(join(gitDir, "HEAD"));
  if (!head) return null;
  if (/^[0-9a-f]{40,64}$/.test(head)) return head;
  const ref = /^ref:\s*(\S+)$/.exec(head)?.[1];
  if (!ref) return null;
  // A linked worktree keeps HEAD in its own git dir and refs in the common one.
  const common = read(join(gitDir, "commondir"));
  const dirs = [gitDir, ...(common ? [isAbsolute(common) ? common : resolve(gitDir, common)] : [])];
  for (const d of dirs) {
    const loose = read(join(d, ref));
    if (loose && /^[0-9a-f]{40,64}$/.test(loose)) return loose;
  }
  for (const d of dirs) {
    const packed = read(join(d, "packed-refs"));
    if (!packed) continue;
    for (const line of packed.split("\n")) {
      const [sha, name] = line.split(" ");
      if (name === ref && sha && /^[0-9a-f]{40,64}$/.test(sha)) return sha;
    }
  }
  return null;
}
