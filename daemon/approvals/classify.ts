import { relative, isAbsolute, sep } from "node:path";
import type { ApprovalAsk } from "../../shared/protocol/approvals.js";

/**
 * Which tool calls need a person's approval (docs/approvals.md). Pure: the service gives it the
 * mode, the workspace roots (already resolved through symlinks) and the configured patterns.
 */
export type ApprovalMode = "ask" | "smart" | "off";

export interface DangerousPattern {
  description: string;
  pattern: RegExp;
}

/** Start of a command: the line's start or after a separator, `(`, `$(`, a backquote, `xargs`, env assignments. */
const START = String.raw`(?:^|[;&|(\x60\n]|\$\(|\bxargs\s+|\bexec\s+|\benv\s+|\bnohup\s+|\btime\s+)\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*`;
/** The rest of one simple command (not past a separator). */
const ARGS = String.raw`[^;&|\n]*`;
const SYSTEM_DIRS = "(?:etc|usr|bin|sbin|lib|lib32|lib64|boot|var|opt|sys|proc|dev|root|srv|System|Library|private)";

/** The built-in list: what smart mode asks about. */
export const BUILTIN_PATTERNS: readonly DangerousPattern[] = Object.freeze(
  (
    [
      ["recursive delete", String.raw`${START}(?:sudo\s+)?rm\b${ARGS}(?:\s-[A-Za-z]*[rR][A-Za-z]*\b|\s--recursive\b)`],
      ["recursive delete", String.raw`${START}find\s${ARGS}\s-delete\b`],
      ["secure delete", String.raw`${START}(?:shred|srm)\s`],
      ["force push", String.raw`${START}git\s${ARGS}\bpush\b${ARGS}(?:\s--force(?:-with-lease|-if-includes)?\b|\s-[A-Za-z]*f[A-Za-z]*\b|\s\+[^\s]+)`],
      ["download piped into a shell", String.raw`\b(?:curl|wget|fetch)\b[^\n;]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:ba|da|z|k|fi|c|tc)?sh\b`],
      ["download piped into an interpreter", String.raw`\b(?:curl|wget)\b[^\n;]*\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node)\b`],
      ["downloaded script run by a shell", String.raw`\b(?:ba|da|z|k)?sh\b[^\n;]*(?:\$\(|<\()\s*(?:curl|wget)\b`],
      ["permission change on a system path", String.raw`${START}(?:sudo\s+)?(?:chmod|chown|chgrp)\b${ARGS}\s(?:/${SYSTEM_DIRS}?(?:/\S*)?|/)(?:\s|$)`],
      [
        "recursive permission change on the home or root",
        String.raw`${START}(?:sudo\s+)?(?:chmod|chown|chgrp)\b${ARGS}\s(?:-R|--recursive)${ARGS}\s(?:~|\$HOME|/)(?:/?\s|$)`,
      ],
      ["sudo", String.raw`${START}(?:sudo|doas|pkexec)\b`],
      ["su", String.raw`${START}su(?:\s+-|\s+root\b|\s+-c\b|\s*$)`],
      [
        "disk tool",
        String.raw`${START}(?:sudo\s+)?(?:mkfs(?:\.[a-z0-9]+)?|fdisk|sfdisk|cfdisk|gdisk|sgdisk|parted|wipefs|mkswap|blkdiscard|diskutil\s+(?:erase|partition|zero))\b`,
      ],
      ["dd to a device", String.raw`${START}(?:sudo\s+)?dd\s${ARGS}\bof=/dev/`],
      ["write to a raw device", String.raw`>\s*/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|rdisk|mapper/)`],
      ["write to a system path", String.raw`>>?\s*/${SYSTEM_DIRS}/`],
      ["fork bomb", String.raw`:\s*\(\s*\)\s*\{[^}]*:\s*\|\s*:`],
      ["power off or reboot", String.raw`${START}(?:sudo\s+)?(?:shutdown|reboot|halt|poweroff)\b`],
    ] as const
  ).map(([description, source]) => ({ description, pattern: new RegExp(source, "m") })),
);

/** Patterns from `approvals.dangerous_patterns` (description → regex); invalid ones were refused by the config check. */
export function configuredPatterns(map: Record<string, string> | undefined): DangerousPattern[] {
  const out: DangerousPattern[] = [];
  for (const [description, source] of Object.entries(map ?? {})) {
    try {
      out.push({ description, pattern: new RegExp(source, "m") });
    } catch {
      // refused by the config schema; a hand-edited profile file is skipped rather than crashing a turn
    }
  }
  return out;
}

/** The dangerous pattern a command matches, or null. */
export function matchDangerous(command: string, patterns: readonly DangerousPattern[] = BUILTIN_PATTERNS): DangerousPattern | null {
  for (const p of patterns) if (p.pattern.test(command)) return p;
  return null;
}

/** True when `path` is `root` or inside it (both absolute, normalised). */
export function isInside(path: string, root: string): boolean {
  const rel = relative(root, path);
  return rel === "" || (!rel.startsWith(`..${sep}`) && rel !== ".." && !isAbsolute(rel));
}

export interface ClassifyInput {
  ask: ApprovalAsk;
  mode: ApprovalMode;
  /** The session's working directory and its git worktree root (null: not in a repository). */
  roots: string[];
  /** For file writes: the target as resolved through symlinks of its existing ancestors. */
  realPath?: string;
  extraPatterns?: readonly DangerousPattern[];
  /** `mcp_servers.<name>.approve` of the server asking, for mcp_tool. */
  mcpApprove?: "ask" | "off";
}

export type Classification = { ask: false } | { ask: true; why: string; danger: string };

/** Whether this call needs a person's approval, and why. */
export function classify(input: ClassifyInput): Classification {
  const { ask, mode } = input;
  if (mode === "off") return { ask: false };
  if (ask.kind === "mcp_tool") {
    // No classifier knows what an MCP tool does: its server's setting decides (asking by default).
    if (input.mcpApprove === "off") return { ask: false };
    return { ask: true, why: `MCP tool ${ask.details.server ?? "?"}/${ask.details.tool ?? ask.tool}`, danger: "MCP tool call" };
  }
  if (ask.kind === "command") {
    const command = ask.details.command ?? ask.summary;
    const hit = matchDangerous(command, [...BUILTIN_PATTERNS, ...(input.extraPatterns ?? [])]);
    if (hit) return { ask: true, why: `dangerous command: ${hit.description}`, danger: "dangerous command" };
    if (mode === "ask") return { ask: true, why: "approvals.mode is ask: every command is asked", danger: "command" };
    return { ask: false };
  }
  // file_write
  const path = input.realPath ?? ask.details.path ?? "";
  const outside = !input.roots.some((root) => isInside(path, root));
  if (outside) return { ask: true, why: "write outside the session's workspace", danger: "write outside the workspace" };
  if (mode === "ask") return { ask: true, why: "approvals.mode is ask: every file write is asked", danger: "file write" };
  return { ask: false };
}

/** The key a session or "always" grant is remembered by: the exact command (whitespace folded), the path, the MCP tool. */
export function grantKey(ask: ApprovalAsk, realPath?: string): string {
  if (ask.kind === "command") return `command:${(ask.details.command ?? ask.summary).trim().replace(/\s+/g, " ")}`;
  if (ask.kind === "file_write") return `path:${realPath ?? ask.details.path ?? ask.summary}`;
  return `mcp:${ask.details.server ?? "?"}/${ask.details.tool ?? ask.tool}`;
}
