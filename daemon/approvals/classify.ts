import { relative, isAbsolute, sep } from "node:path";
import type { ApprovalAsk } from "../../shared/protocol/approvals.js";
import { nestedQuantifier } from "../../shared/regex-safety.js";

/**
 * Which tool calls need a person's approval (docs/approvals.md). Pure: the service gives it the
 * mode, the workspace roots (already resolved through symlinks) and the configured patterns.
 */
export type ApprovalMode = "ask" | "smart" | "off";

export interface DangerousPattern {
  description: string;
  pattern: RegExp;
}

/**
 * Start of a command: the line's start or after a separator, `(`, `{`, `$(`, a backquote, a shell
 * keyword (`then`, `do`, …), `sh -c`, or a wrapper that runs its arguments as a command (`xargs`,
 * `env`, `eval`, `command`, `nice`, `timeout 5`, …), then env assignments and an optional directory
 * (`/bin/rm`). Each part is bounded by a keyword, so the patterns stay linear on long input.
 */
const START = String.raw`(?:^|[;&|(){}!\x60\n]|\$\(|\b(?:then|do|else|elif)\s|\b(?:ba|da|z|k|fi|tc)?sh\s+(?:-[^\s;&|]*\s+)*|\b(?:xargs|exec|env|nohup|time|eval|command|builtin|nice|ionice|stdbuf|strace|ltrace|watch|busybox|chroot|setsid|unbuffer|flock)\s+(?:-[^\s;&|]*\s+(?:[0-9]+\s+)?)*|\btimeout\s+(?:-[^\s;&|]*\s+)*[0-9.]+[smhd]?\s+)\s*(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*(?:[^\s;&|()<>\x60]*/)?`;
/** The rest of one simple command (not past a separator). */
const ARGS = String.raw`[^;&|\n]*`;
const SYSTEM_DIRS = "(?:etc|usr|bin|sbin|lib|lib32|lib64|boot|var|opt|sys|proc|dev|root|srv|System|Library|private)";

/** The built-in list: what smart mode asks about. */
export const BUILTIN_PATTERNS: readonly DangerousPattern[] = Object.freeze(
  (
    [
      ["recursive delete", String.raw`${START}(?:sudo\s+)?rm\b${ARGS}(?:\s-[A-Za-z]*[rR][A-Za-z]*\b|\s--recursive\b)`],
      ["recursive delete", String.raw`${START}find\s${ARGS}\s-delete\b`],
      ["recursive delete", String.raw`${START}find\s${ARGS}\s-(?:exec|execdir|ok|okdir)\s+(?:\S*/)?(?:rm|shred|unlink)\b`],
      ["secure delete", String.raw`${START}(?:shred|srm)\s`],
      [
        "force push or remote branch delete",
        String.raw`${START}git\s${ARGS}\bpush\b${ARGS}(?:\s--force(?:-with-lease|-if-includes)?\b|\s-[A-Za-z]*f[A-Za-z]*\b|\s\+[^\s]+|\s--(?:delete|mirror|prune)\b|\s-d\b|\s:[^\s:]\S*)`,
      ],
      ["download piped into a shell", String.raw`\b(?:curl|wget|fetch)\b[^\n;]*\|\s*(?:sudo\s+)?(?:env\s+)?(?:ba|da|z|k|fi|c|tc)?sh\b`],
      ["download piped into an interpreter", String.raw`\b(?:curl|wget)\b[^\n;]*\|\s*(?:sudo\s+)?(?:python[0-9.]*|perl|ruby|node)\b`],
      ["downloaded script run by a shell", String.raw`\b(?:ba|da|z|k)?sh\b[^\n;]*(?:\$\(|<\()\s*(?:curl|wget)\b`],
      ["permission change on a system path", String.raw`${START}(?:sudo\s+)?(?:chmod|chown|chgrp)\b${ARGS}\s(?:/${SYSTEM_DIRS}?(?:/\S*)?|/)(?:\s|$)`],
      [
        "recursive permission change on the home or root",
        String.raw`${START}(?:sudo\s+)?(?:chmod|chown|chgrp)\b${ARGS}\s(?:-R|--recursive)${ARGS}\s(?:~|\$HOME|\$\{HOME\}|/)/?(?:\s|$)`,
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
      ["write to a system path", String.raw`${START}(?:sudo\s+)?tee\s+(?:-\S+\s+)*/${SYSTEM_DIRS}/`],
      ["write to a system path", String.raw`${START}(?:sudo\s+)?(?:cp|mv|install|ln|rsync)\s${ARGS}\s/${SYSTEM_DIRS}(?:/[^\s;&|]*)?[ \t]*(?=[;&|\n]|$)`],
      ["write to a system path", String.raw`${START}(?:sudo\s+)?truncate\s${ARGS}\s/${SYSTEM_DIRS}/`],
      ["changes the agent's own approvals or config", String.raw`${START}agent\b${ARGS}(?:\s(?:approvals|config|profiles?)(?:\s|$)|\s--yolo\b)`],
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
      if (nestedQuantifier(source)) continue;
      out.push({ description, pattern: new RegExp(source, "m") });
    } catch {
      // refused by the config schema; a hand-edited profile file is skipped rather than crashing a turn
    }
  }
  return out;
}

/**
 * The command as the shell would read its words, for matching: line continuations joined,
 * quotes and backslashes dropped (`\\rm`, `"rm"`, `r''m` and `bash -c "rm -rf x"` all show `rm`),
 * compatibility characters folded (fullwidth letters). A heuristic, not a shell parser.
 */
export function shellWords(command: string): string {
  return command
    .normalize("NFKC")
    .replace(/\\\r?\n/g, "")
    .replace(/["'\\]/g, "");
}

/** The dangerous pattern a command matches (as written, or as the shell reads its words), or null. */
export function matchDangerous(command: string, patterns: readonly DangerousPattern[] = BUILTIN_PATTERNS): DangerousPattern | null {
  const words = shellWords(command);
  for (const p of patterns) if (p.pattern.test(command) || (words !== command && p.pattern.test(words))) return p;
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
  /** The write goes to the agent's own state (its config, approvals, actors, skills…): always asked, unless mode is off. */
  agentState?: boolean;
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
  if (ask.kind === "desktop") {
    // computer_use: the daemon's private Xvfb is the agent's own sandbox (asked only in ask mode);
    // a configured display is someone's session, so every action on it is asked.
    const d = ask.details.desktop;
    if (d && !d.private) return { ask: true, why: `desktop action on display ${d.display} (not the private one)`, danger: "desktop action" };
    if (mode === "ask") return { ask: true, why: "approvals.mode is ask: every desktop action is asked", danger: "desktop action" };
    return { ask: false };
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
  if (input.agentState)
    return { ask: true, why: "write into the agent's own state (config, approvals, actors, skills)", danger: "write into the agent's home" };
  const outside = !input.roots.some((root) => isInside(path, root));
  if (outside) return { ask: true, why: "write outside the session's workspace", danger: "write outside the workspace" };
  if (mode === "ask") return { ask: true, why: "approvals.mode is ask: every file write is asked", danger: "file write" };
  return { ask: false };
}

/** The key a session or "always" grant is remembered by: the exact command (whitespace folded), the path, the MCP tool. */
export function grantKey(ask: ApprovalAsk, realPath?: string): string {
  if (ask.kind === "command") return `command:${(ask.details.command ?? ask.summary).trim().replace(/[ \t]+/g, " ")}`;
  if (ask.kind === "file_write") return `path:${realPath ?? ask.details.path ?? ask.summary}`;
  if (ask.kind === "desktop") return `desktop:${ask.details.desktop?.display ?? "?"}/${ask.details.desktop?.action ?? ask.tool}`;
  return `mcp:${ask.details.server ?? "?"}/${ask.details.tool ?? ask.tool}`;
}

/** Per profile folder: what the daemon reads as config, code or state (shared/paths.ts). */
export const AGENT_STATE_NAMES: ReadonlySet<string> = new Set([
  "config.yaml",
  ".env",
  "auth.json",
  "approvals.json",
  "SOUL.md",
  "profile.yaml",
  "distribution.yaml",
  "daemon.sock",
  "daemon.lock",
  "actors",
  "skills",
  "cron",
  "memories",
  "sessions",
  "profiles",
  "snapshots",
  "lsp",
  "logs",
  "data",
  "coder",
]);

/**
 * True when a write to `path` would change the agent's own state in its home `home` (both
 * resolved): a profile's config, `.env`, `auth.json`, remembered approvals, persona, actors, skills, cron jobs,
 * sessions, data. A kanban task's workspace (data/kanban/workspaces/<task>/…) and other files in a
 * profile folder (a cron job's default working directory) are not.
 */
export function isAgentState(path: string, home: string): boolean {
  if (!isInside(path, home)) return false;
  let parts = relative(home, path).split(sep).filter(Boolean);
  if (parts[0] === "profiles" && parts.length > 2) parts = parts.slice(2);
  if (!parts.length) return false;
  if (parts[0] === "data" && parts[1] === "kanban" && parts[2] === "workspaces" && parts.length > 4) return false;
  return AGENT_STATE_NAMES.has(parts[0]!);
}
