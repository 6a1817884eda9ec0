#!/usr/bin/env node
/**
 * Regenerate daemon/coder/protocol/ from the pinned codex binary: `codex app-server generate-ts`
 * prints the whole protocol (~800 files, 3 MB); only the types the coder runtime uses, and the
 * files they import, are kept, with `.js` added to their relative imports (NodeNext).
 *
 *   node scripts/generate-coder-protocol.mjs [path/to/codex]
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const codex = process.argv[2] ?? join(ROOT, ".tools", "codex", "node_modules", ".bin", "codex");
const OUT = join(ROOT, "daemon", "coder", "protocol");
const USED = [
  "InitializeParams",
  "InitializeResponse",
  "v2/ThreadStartParams",
  "v2/ThreadStartResponse",
  "v2/TurnStartParams",
  "v2/TurnStartResponse",
  "v2/TurnInterruptParams",
  "v2/TurnCompletedNotification",
  "v2/PluginListParams",
  "v2/ThreadItem",
  "v2/ItemStartedNotification",
  "v2/ItemCompletedNotification",
  "v2/AgentMessageDeltaNotification",
  "v2/CommandExecutionRequestApprovalParams",
  "v2/CommandExecutionRequestApprovalResponse",
  "v2/FileChangeRequestApprovalParams",
  "v2/FileChangeRequestApprovalResponse",
  "v2/PermissionsRequestApprovalParams",
  "v2/PermissionsRequestApprovalResponse",
  "v2/McpServerElicitationRequestParams",
  "v2/McpServerElicitationRequestResponse",
];

const all = mkdtempSync(join(tmpdir(), "codex-ts-"));
try {
  execFileSync(codex, ["app-server", "generate-ts", "--out", all], { stdio: "inherit" });
  const seen = new Set();
  const visit = (rel) => {
    if (seen.has(rel)) return;
    seen.add(rel);
    for (const m of readFileSync(join(all, rel), "utf8").matchAll(/from "(\.[^"]+)"/g)) visit(normalize(join(dirname(rel), `${m[1]}.ts`)));
  };
  for (const u of USED) visit(`${u}.ts`);
  rmSync(OUT, { recursive: true, force: true });
  for (const rel of seen) {
    mkdirSync(dirname(join(OUT, rel)), { recursive: true });
    copyFileSync(join(all, rel), join(OUT, rel));
    const text = readFileSync(join(OUT, rel), "utf8").replace(/from "(\.[^"]+)";/g, 'from "$1.js";');
    writeFileSync(join(OUT, rel), text);
  }
  console.log(`${seen.size} files in ${OUT}`);
} finally {
  rmSync(all, { recursive: true, force: true });
}
