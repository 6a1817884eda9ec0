import { existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { extract, list } from "tar";
import { connectDaemon } from "../../shared/client/index.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";

/** The file `agent backup` puts at the root of every archive. */
const MANIFEST = "agent-backup.json";

const SPEC = {
  usage: "agent import <archive> [--force]",
  description: "Restore a backup (agent backup) into AGENT_HOME, which must be empty unless --force.",
  flags: { force: { type: "boolean" } },
  help: `Options
  --force   restore into a home that is not empty: files from the archive replace those of the
            same name, others stay (the daemon must be stopped first: agent daemon stop)`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length !== 1) throw new AgentError("usage.invalid", `agent import takes one archive; usage: ${SPEC.usage}`);
  const archive = resolve(cli.input[0]!);
  if (!existsSync(archive) || !statSync(archive).isFile()) throw new AgentError("backup.invalid_archive", `no archive at ${archive}`);
  const home = env.home;
  const entries = existsSync(home) ? readdirSync(home) : [];
  if (entries.length && !cli.flags.force)
    throw new AgentError(
      "backup.home_not_empty",
      `${home} is not empty (${entries.length} entries); import into an empty home, or pass --force to restore over it`,
    );
  if (entries.length) await refuseWhileRunning(home);
  const paths = await check(archive);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  await extract({
    file: archive,
    cwd: home,
    // Files and folders only, inside the home (tar also refuses absolute paths and `..`).
    filter: (_path, entry) => "type" in entry && (entry.type === "File" || entry.type === "Directory"),
    strict: true,
  });
  rmSync(join(home, MANIFEST), { force: true });
  printResult({ home, archive, files: paths }, Boolean(cli.flags.json), () => `restored ${paths} files from ${archive} into ${home}`);
  return EXIT.ok;
}

/** An agent backup: a gzip tar with our manifest at its root and nothing but files and folders. */
async function check(archive: string): Promise<number> {
  let manifest = false;
  let files = 0;
  let bad: string | null = null;
  try {
    await list({
      file: archive,
      strict: true,
      onReadEntry: (entry) => {
        const p = entry.path.replace(/^\.\//, "");
        if (p === MANIFEST) manifest = true;
        if (entry.type === "File") files++;
        else if (entry.type !== "Directory") bad ??= `${p} (${entry.type})`;
        if (p.startsWith("/") || p.split("/").includes("..")) bad ??= p;
        entry.resume();
      },
    });
  } catch (error) {
    throw new AgentError("backup.invalid_archive", `${archive} is not a readable .tar.gz: ${toAgentError(error).message}`);
  }
  if (!manifest) throw new AgentError("backup.invalid_archive", `${archive} is not an agent backup (no ${MANIFEST} at its root)`);
  if (bad) throw new AgentError("backup.invalid_archive", `${archive} holds an entry an agent backup never has: ${bad}`);
  return files - 1;
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
