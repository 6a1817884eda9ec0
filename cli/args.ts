import type { AnyFlags, Result } from "meow";
import { AgentError } from "../shared/errors.js";

/** Flags every command understands. */
export const GLOBAL_FLAGS = {
  json: { type: "boolean", default: false },
  debug: { type: "boolean", default: false },
} as const satisfies AnyFlags;

export interface CommandSpec<F extends AnyFlags> {
  /** e.g. "agent daemon <start|stop|status>" */
  usage: string;
  description: string;
  flags: F;
  /** Extra help lines (options, examples). */
  help?: string;
}

/**
 * Parse one command's argv with meow. Unknown flags are a usage error (exit 2) that names the
 * flag; `--help` prints this command's help.
 */
export async function parseCommand<F extends AnyFlags>(argv: string[], spec: CommandSpec<F>): Promise<Result<F & typeof GLOBAL_FLAGS>> {
  const { default: meow } = await import("meow");
  const flags = { ...GLOBAL_FLAGS, ...spec.flags } as F & typeof GLOBAL_FLAGS;
  const help = `\n  ${spec.description}\n\n  Usage\n    $ ${spec.usage}\n${spec.help ? `\n${spec.help.replace(/^/gm, "  ").trimEnd()}\n` : ""}\n  Global options\n    --json   print machine-readable JSON\n    --debug  show stack traces of errors\n`;
  const known = new Set(Object.keys(flags).flatMap((k) => [k, kebab(k), ...(flags[k]?.shortFlag ? [flags[k].shortFlag] : []), ...(flags[k]?.aliases ?? [])]));
  for (const arg of argv) {
    if (arg === "--") break;
    const m = /^--?(?:no-)?([^=]+)/.exec(arg);
    if (m && !/^-\d/.test(arg) && !known.has(m[1]!) && m[1] !== "help") {
      throw new AgentError("usage.unknown_flag", `unknown option ${arg.split("=")[0]} for \`${spec.usage.split(" ").slice(0, 3).join(" ")}\`; see --help`);
    }
  }
  return meow(help, {
    importMeta: import.meta,
    argv,
    flags,
    autoHelp: true,
    autoVersion: false,
    allowUnknownFlags: true,
    booleanDefault: undefined,
  }) as Result<F & typeof GLOBAL_FLAGS>;
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}

export function usageError(message: string): AgentError {
  return new AgentError("usage.invalid", message);
}
