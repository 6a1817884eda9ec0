import { createInterface } from "node:readline";
import type { ImportAnswer, ImportPreview, ImportReport, ImportRequest, ImportResult } from "../../shared/backup-import.js";
import { connectDaemon } from "../../shared/client/index.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { runDaemonChild } from "../daemon-child.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

const SPEC = {
  usage: "agent import <archive> [-y] [--force] [--keep-cron] [--keep-network] [--max-bytes <n>] [--max-files <n>] [--max-file-bytes <n>]",
  description: "Restore a backup (agent backup) into AGENT_HOME, which must be empty unless --force.",
  flags: {
    force: { type: "boolean" },
    yes: { type: "boolean", shortFlag: "y" },
    "keep-cron": { type: "boolean" },
    "keep-network": { type: "boolean" },
    "max-bytes": { type: "string" },
    "max-files": { type: "string" },
    "max-file-bytes": { type: "string" },
  },
  help: `Before anything is restored, import lists what would run or listen once the daemon starts on
the restored home (actor modules, cron jobs, language servers and commands, a gateway bind that
is not loopback, tokens) and asks; -y accepts. Without a terminal and without -y it refuses
(exit 1) and changes nothing.

Options
  -y, --yes              restore what the list names without asking
  --keep-cron            keep restored cron jobs enabled (default: restored paused; \`agent cron resume <id>\`)
  --keep-network         keep a gateway, proxy or API server bind that is not loopback (default: reset to 127.0.0.1)
  --force                restore into a home that is not empty: files from the archive replace those of the
                         same name, others stay (the daemon must be stopped first: agent daemon stop)
  --max-bytes <n>        refuse an archive whose files add up to more (default 20G; env AGENT_IMPORT_MAX_BYTES)
  --max-files <n>        refuse an archive with more files (default 1000000; env AGENT_IMPORT_MAX_FILES)
  --max-file-bytes <n>   refuse an archive with a larger file (default 4G; env AGENT_IMPORT_MAX_FILE_BYTES)
                         sizes take k, M, G, T (powers of 1024)

The archive is restored into a staging folder next to AGENT_HOME and renamed into place at the
end: a failure (a full disk, a kill) leaves AGENT_HOME as it was.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length !== 1) throw new AgentError("usage.invalid", `agent import takes one archive; usage: ${SPEC.usage}`);
  const f = cli.flags;
  const json = Boolean(f.json);
  const home = env.home;
  if (f.force) await refuseWhileRunning(home);
  const request: ImportRequest = {
    archive: cli.input[0]!,
    home,
    force: Boolean(f.force),
    keepCron: Boolean(f["keep-cron"]),
    keepNetwork: Boolean(f["keep-network"]),
    ...(f["max-bytes"] !== undefined ? { maxBytes: String(f["max-bytes"]) } : {}),
    ...(f["max-files"] !== undefined ? { maxFiles: String(f["max-files"]) } : {}),
    ...(f["max-file-bytes"] !== undefined ? { maxFileBytes: String(f["max-file-bytes"]) } : {}),
  };
  // The work is the daemon's code, run in a process of its own by its path: no daemon runs on a
  // home being restored, and the CLI holds no daemon code. This side only asks.
  const r = await runImport(request, async (staged) => {
    if (!staged.needsConsent || f.yes) return true;
    // With --json the list is in the error's metadata (`preview`) instead.
    if (!json || process.stdin.isTTY) process.stderr.write(terminalText(previewText(staged.preview, request.keepCron, request.keepNetwork)));
    if (!process.stdin.isTTY)
      throw new AgentError(
        "backup.confirmation_required",
        `${staged.archive} restores ${json ? "what metadata.preview lists" : "what is listed above"} (code that runs, cron jobs, network binds or tokens); nothing was changed: confirm with -y when not running in a terminal`,
        { preview: staged.preview },
      );
    if (await ask("Restore these?")) return true;
    process.stderr.write("cancelled; nothing was changed\n");
    return false;
  });
  if (!r) return EXIT.failure;
  printResult(r, json, () => {
    const lines = [`restored ${r.files} files from ${r.archive} into ${r.home}`];
    if (r.cronPaused.length)
      lines.push(
        `${r.cronPaused.length} cron job${r.cronPaused.length === 1 ? "" : "s"} restored paused; \`agent cron resume <id>\` (${r.cronPaused.map((c) => (c.profile === "default" ? c.id : `-p ${c.profile} ${c.id}`)).join(", ")})`,
      );
    else if (r.preview.cron.length) lines.push(`${r.preview.cron.length} cron job(s) restored enabled (--keep-cron)`);
    for (const l of r.replacedLinks) lines.push(`the link ${l} was replaced by the archive's folder`);
    for (const n of r.networkReset) lines.push(`${n.file}: ${n.key} ${n.value} reset to 127.0.0.1 (--keep-network keeps it)`);
    return terminalText(lines.join("\n"));
  });
  return EXIT.ok;
}

/**
 * Runs the import process (daemon/backup/import-main.js) and relays: its preview to `consent`,
 * the answer back, and its result or error. Null when the user said no. Ctrl-C reaches the
 * child too (same process group); it drops its staging folder.
 */
function runImport(request: ImportRequest, consent: (staged: Extract<ImportReport, { type: "staged" }>) => Promise<boolean>): Promise<ImportResult | null> {
  return runDaemonChild<ImportResult | null, Extract<ImportReport, { type: "staged" }>>("daemon/backup/import-main.js", request, {
    onMessage(m, child, end) {
      consent(m).then(
        (yes) => {
          if (!yes) end({ ok: true, value: null });
          child.send({ type: yes ? "apply" : "cancel" } satisfies ImportAnswer);
        },
        (error) => {
          end({ ok: false, error });
          child.send({ type: "cancel" } satisfies ImportAnswer);
        },
      );
    },
    lost: (how) => new AgentError("backup.import_failed", `the import process ended (${how}) before it finished; the home is as it was`),
  });
}

function previewText(p: ImportPreview, keepCron: boolean, keepNetwork: boolean): string {
  const out = ["This archive restores what runs or listens once the daemon starts:"];
  if (p.actors.length) out.push(`  actor modules (loaded and run at start):`, ...p.actors.map((a) => `    ${a}`));
  if (p.cron.length) {
    out.push(`  cron jobs (${keepCron ? "restored enabled: --keep-cron" : "restored paused"}):`);
    for (const c of p.cron)
      out.push(`    ${c.profile === "default" ? "" : `[${c.profile}] `}${c.id} ${c.name} (${c.schedule}) ${c.runs.replace(/\s+/g, " ").slice(0, 120)}`);
  }
  if (p.commands.length) out.push(`  commands the daemon runs:`, ...p.commands.map((c) => `    ${c}`));
  if (p.network.length) {
    out.push(`  network (${keepNetwork ? "kept: --keep-network" : "reset to 127.0.0.1 unless --keep-network"}):`);
    for (const n of p.network) out.push(`    ${n.file}: ${n.key} = ${n.value}`);
  }
  if (p.tokens.length) out.push(`  tokens and keys (whoever made the archive knows them):`, ...p.tokens.map((t) => `    ${t.file}: ${t.name}`));
  return `${out.join("\n")}\n`;
}

async function ask(question: string): Promise<boolean> {
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await new Promise<string>((resolve) => {
      rl.on("SIGINT", () => resolve(""));
      rl.on("close", () => resolve(""));
      rl.question(`${question} [y/N] `, resolve);
    });
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

async function refuseWhileRunning(home: string): Promise<void> {
  try {
    const client = await connectDaemon({ home });
    client.close();
  } catch (error) {
    if (toAgentError(error).code === "daemon.not_running") return;
    throw error;
  }
  throw new AgentError("backup.daemon_running", `a daemon is running on ${home}; stop it first (agent daemon stop), then import with --force`);
}
