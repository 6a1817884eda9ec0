import { execFile } from "node:child_process";
import { access, constants, stat } from "node:fs/promises";
import { delimiter, join } from "node:path";

/** The version `agent coder-runtime install` puts in the home's tool folder. */
export const PINNED_CODEX_VERSION = "0.169.0";
/** Older app-servers lack the protocol we speak. */
export const MIN_CODEX_VERSION = "0.125.0";
export const CODEX_PACKAGE = "@openai/codex";

export interface CoderBinary {
  path: string;
  /** How it was found. */
  source: "config" | "PATH" | "tools";
  /** `x.y.z`, or null when `--version` did not say. */
  version: string | null;
}

/** The home's tool folder: `npm install --prefix <it>` puts the package's bin in node_modules/.bin. */
export function toolsDir(home: string): string {
  return join(home, "tools");
}

async function executable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/** Candidates in order: `coder_runtime.command`, then `codex` on PATH, then the tool folder's package. */
export async function findCoderBinary(options: {
  command: string;
  env: NodeJS.ProcessEnv;
  home: string;
}): Promise<{ path: string; source: CoderBinary["source"] } | null> {
  if (options.command) {
    if (await executable(options.command)) return { path: options.command, source: "config" };
    return null; // a configured command that is not there is not silently replaced
  }
  for (const dir of (options.env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, "codex");
    if (await executable(candidate)) return { path: candidate, source: "PATH" };
  }
  const tools = join(toolsDir(options.home), "node_modules", ".bin", "codex");
  if (await executable(tools)) return { path: tools, source: "tools" };
  return null;
}

const versions = new Map<string, { mtimeMs: number; version: string | null }>();

/** `codex --version` ("codex-cli 0.169.0") → "0.169.0"; cached per file and modification time. */
export async function binaryVersion(path: string): Promise<string | null> {
  const mtimeMs = (await stat(path)).mtimeMs;
  const known = versions.get(path);
  if (known && known.mtimeMs === mtimeMs) return known.version;
  const out = await new Promise<string>((resolve) => {
    execFile(path, ["--version"], { timeout: 15_000, env: { ...process.env, NO_COLOR: "1" } }, (_error, stdout) => resolve(String(stdout ?? "")));
  });
  const version = /(\d+\.\d+\.\d+)/.exec(out)?.[1] ?? null;
  versions.set(path, { mtimeMs, version });
  return version;
}

/** a < b for dotted numeric versions. */
export function versionBelow(a: string, b: string): boolean {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? 0;
    const y = pb[i] ?? 0;
    if (x !== y) return x < y;
  }
  return false;
}

export function installHint(home: string): string {
  return `install it with \`agent coder-runtime install\` (npm puts ${CODEX_PACKAGE}@${PINNED_CODEX_VERSION} in ${toolsDir(home)}), put \`codex\` on PATH, or set coder_runtime.command`;
}
