import { statSync } from "node:fs";
import { dirname, join } from "node:path";

/** How far up from a file the search for the enclosing git worktree goes. */
export const MAX_WORKSPACE_WALK = 64;

/**
 * The enclosing git worktree of a file: the nearest directory with a `.git` entry (a directory,
 * or a file for linked worktrees and submodules), at most 64 steps up. Null outside one: such
 * files get only the syntax check, since a server given an arbitrary root (say `/` or `$HOME`)
 * would index far too much.
 */
export function findWorkspace(file: string): string | null {
  let dir = dirname(file);
  for (let i = 0; i < MAX_WORKSPACE_WALK; i++) {
    try {
      statSync(join(dir, ".git"));
      return dir;
    } catch {
      // not here; go up
    }
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
  return null;
}
