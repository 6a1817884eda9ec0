import { existsSync, type Dirent } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import ignore, { type Ignore } from "ignore";

/** Never walked into, whatever .gitignore says. */
const ALWAYS_SKIPPED = new Set([".git", "node_modules"]);
/** How far up we look for the repository root: at most this many parent folders, so a walk from a deep or looping path ends. */
const MAX_UPWARD_STEPS = 64;

export interface WalkEntry {
  abs: string;
  /** Relative to the walk root, with `/` separators. */
  rel: string;
  dir: boolean;
  /** 1 for entries directly in the root. */
  depth: number;
}

interface Scope {
  base: string;
  rules: Ignore;
}

async function loadScope(dir: string): Promise<Scope | null> {
  try {
    const text = await readFile(join(dir, ".gitignore"), "utf8");
    return { base: dir, rules: ignore().add(text) };
  } catch {
    return null;
  }
}

/**
 * .gitignore files above the walk root still apply when the root sits inside a git repository:
 * collect those between the repository root and the walk root (outermost first).
 */
async function ancestorScopes(root: string): Promise<Scope[]> {
  if (existsSync(join(root, ".git"))) return [];
  const found: Scope[] = [];
  let dir = dirname(root);
  for (let step = 0; step < MAX_UPWARD_STEPS; step++) {
    const scope = await loadScope(dir);
    if (scope) found.unshift(scope);
    if (existsSync(join(dir, ".git"))) return found;
    const up = dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  return []; // not inside a repository: outer .gitignore files are not ours to apply
}

/** Git semantics: the deepest .gitignore with an opinion wins (a nested `!pattern` re-includes). */
function isIgnored(abs: string, isDir: boolean, scopes: Scope[]): boolean {
  let ignored = false;
  for (const scope of scopes) {
    if (!abs.startsWith(scope.base + sep)) continue;
    const rel = relative(scope.base, abs).split(sep).join("/") + (isDir ? "/" : "");
    const verdict = scope.rules.test(rel);
    if (verdict.ignored) ignored = true;
    else if (verdict.unignored) ignored = false;
  }
  return ignored;
}

/**
 * Depth-first walk of `root` in name order, honouring nested .gitignore files, skipping .git and
 * node_modules, not following symlinked directories (no cycles).
 */
export async function* walk(root: string, options: { maxDepth: number }): AsyncGenerator<WalkEntry> {
  const rootScopes = await ancestorScopes(root);
  async function* visit(dir: string, depth: number, scopes: Scope[]): AsyncGenerator<WalkEntry> {
    const own = await loadScope(dir);
    const active = own ? [...scopes, own] : scopes;
    let entries: Dirent[];
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return; // unreadable directory: skip it rather than fail the whole walk
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      if (ALWAYS_SKIPPED.has(entry.name)) continue;
      const abs = join(dir, entry.name);
      let isDir = entry.isDirectory();
      if (entry.isSymbolicLink()) {
        const target = await stat(abs).catch(() => null);
        if (!target || target.isDirectory()) continue;
        isDir = false;
      } else if (!isDir && !entry.isFile()) {
        continue; // sockets, fifos, devices
      }
      if (isIgnored(abs, isDir, active)) continue;
      const rel = relative(root, abs).split(sep).join("/");
      yield { abs, rel, dir: isDir, depth };
      if (isDir && depth < options.maxDepth) yield* visit(abs, depth + 1, active);
    }
  }
  yield* visit(root, 1, rootScopes);
}
