import { resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";
import { withDaemon } from "../with-daemon.js";

const SPEC = {
  usage: "agent backup [--quick] [--label <l>] [-o <path>]",
  description: "Write a .tar.gz of AGENT_HOME (sessions, boards, profiles, config), consistent while the daemon runs.",
  flags: {
    quick: { type: "boolean" },
    label: { type: "string" },
    output: { type: "string", shortFlag: "o" },
  },
  help: `Options
  --quick          leave out logs and what can be rebuilt (the search index, language servers, *_cache folders)
  --label <l>      added to the file name (letters, digits, _ - .)
  -o, --output <p> a .tar.gz path or a folder (default: $AGENT_HOME/backups/)

Symbolic links are followed: the archive holds the files they point at (a skill linked from a
dotfiles folder included), up to 1 GiB / 100000 files for all links together; a link that
would pass that, a broken link, a loop or a socket is left out and listed as skipped.
The archive is written 0600 (it holds .env).

Restore with \`agent import <archive>\` into an empty home.`,
} as const;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length) throw new AgentError("usage.invalid", `agent backup takes no arguments (got ${cli.input.join(" ")}); usage: ${SPEC.usage}`);
  const { quick, label, output } = cli.flags;
  if (label !== undefined && !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(label))
    throw new AgentError("usage.invalid", `--label uses letters, digits, "_", "-" and "." (at most 64); got ${JSON.stringify(label)}`);
  return withDaemon(env, async (client) => {
    const r = await client.call("backup.create", {
      ...(quick ? { quick: true } : {}),
      ...(label ? { label } : {}),
      ...(output ? { output: resolve(output) } : {}),
    });
    printResult(r, Boolean(cli.flags.json), () =>
      [
        `backup written: ${r.path} (${r.files} files, ${(r.bytes / 1024).toFixed(1)} KiB${r.quick ? ", quick" : ""})`,
        ...(r.followed ?? []).map((l) => `  followed link ${l}`),
        ...(r.skipped ?? []).map((s) => `  skipped ${s.path}: ${s.reason}`),
      ].join("\n"),
    );
    return EXIT.ok;
  });
}
