import type { AnyFlags, Flag, Result } from "meow";
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

type Parsed<F extends AnyFlags> = Result<F & typeof GLOBAL_FLAGS>;

/**
 * Parse one command's argv. Unknown flags are a usage error (exit 2) that names the flag;
 * `--help` prints this command's help.
 *
 * Start-up cost matters (every kanban worker and script runs the CLI), and loading meow costs
 * ~40 ms, about a fifth of a whole `agent daemon status`. So the common case, plain flags and no
 * `--help`, is parsed here with meow's semantics (camelCase keys, --kebab-case and --no-x,
 * short flags, defaults, strings as input); help, and any spec using isMultiple, isRequired or
 * choices, go to meow itself. test/foundation/args.test.ts checks both agree.
 */
export async function parseCommand<F extends AnyFlags>(argv: string[], spec: CommandSpec<F>): Promise<Parsed<F>> {
  const flags = { ...GLOBAL_FLAGS, ...spec.flags } as F & typeof GLOBAL_FLAGS;
  const help = helpText(spec);
  const known = new Set(Object.keys(flags).flatMap((k) => [k, kebab(k), ...(flags[k]?.shortFlag ? [flags[k].shortFlag] : []), ...(flags[k]?.aliases ?? [])]));
  for (const arg of argv) {
    if (arg === "--") break;
    const m = /^--?(?:no-)?([^=]+)/.exec(arg);
    if (m && !/^-\d/.test(arg) && !known.has(m[1]!) && m[1] !== "help") {
      throw new AgentError("usage.unknown_flag", `unknown option ${arg.split("=")[0]} for \`${spec.usage.split(" ").slice(0, 3).join(" ")}\`; see --help`);
    }
  }
  const fast = argv.includes("--help") || argv.includes("-h") ? null : parseFast(argv, flags);
  if (fast) {
    const showHelp = (code?: number) => {
      console.log(help);
      process.exit(typeof code === "number" ? code : 2);
    };
    return { input: fast.input, flags: fast.flags, unnormalizedFlags: fast.flags, help, showHelp, showVersion: () => process.exit(0), pkg: {} } as unknown as Parsed<F>;
  }
  return parseWithMeow(argv, flags, help);
}

export async function parseWithMeow<F extends AnyFlags>(argv: string[], flags: F, help: string): Promise<Result<F>> {
  const { default: meow } = await import("meow");
  return meow(help, {
    importMeta: import.meta,
    argv,
    flags,
    autoHelp: true,
    autoVersion: false,
    allowUnknownFlags: true,
    booleanDefault: undefined,
  }) as Result<F>;
}

function helpText(spec: CommandSpec<AnyFlags>): string {
  return `\n  ${spec.description}\n\n  Usage\n    $ ${spec.usage}\n${spec.help ? `\n${spec.help.replace(/^/gm, "  ").trimEnd()}\n` : ""}\n  Global options\n    --json   print machine-readable JSON\n    --debug  show stack traces of errors\n`;
}

/**
 * meow's parse for plain flags; null when argv or the spec uses something this does not
 * handle (the caller then asks meow).
 */
export function parseFast(argv: string[], flags: AnyFlags): { input: string[]; flags: Record<string, unknown> } | null {
  const byName = new Map<string, string>();
  for (const [key, flag] of Object.entries(flags) as Array<[string, Flag<"string" | "number" | "boolean", unknown>]>) {
    if (flag.isMultiple || flag.isRequired || flag.choices) return null;
    for (const name of [key, kebab(key), ...(flag.aliases ?? [])]) byName.set(`--${name}`, key);
    if (flag.shortFlag) byName.set(`-${flag.shortFlag}`, key);
  }
  const input: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, flag] of Object.entries(flags)) if (flag.default !== undefined) out[key] = flag.default;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--") {
      input.push(...argv.slice(i + 1));
      break;
    }
    if (!arg.startsWith("-") || arg === "-" || /^-\d/.test(arg)) {
      input.push(arg);
      continue;
    }
    const eq = arg.indexOf("=");
    const name = eq > 0 ? arg.slice(0, eq) : arg;
    const negated = name.startsWith("--no-") ? byName.get(`--${name.slice(5)}`) : undefined;
    const key = byName.get(name) ?? negated;
    if (!key) return null; // grouped short flags and the like
    const type = flags[key]!.type;
    if (negated && !byName.has(name)) {
      if (type !== "boolean" || eq > 0) return null;
      out[key] = false;
      continue;
    }
    let raw: string | undefined = eq > 0 ? arg.slice(eq + 1) : undefined;
    if (type === "boolean") {
      if (raw === undefined && (argv[i + 1] === "true" || argv[i + 1] === "false")) raw = argv[++i];
      if (raw !== undefined && raw !== "true" && raw !== "false") return null;
      out[key] = raw === undefined ? true : raw === "true";
      continue;
    }
    if (raw === undefined) {
      const next = argv[i + 1];
      if (next !== undefined && (!next.startsWith("-") || next === "-" || (type === "number" && /^-\d/.test(next)))) raw = argv[++i];
    }
    // A value flag with nothing after it is a mistake, not an empty value (`--key ""` is one).
    if (raw === undefined) throw new AgentError("usage.missing_value", `${name} needs a value`);
    if (type === "number") {
      const n = Number(raw);
      if (raw.trim() === "" || !Number.isFinite(n)) throw new AgentError("usage.invalid", `${name} needs a number, got ${JSON.stringify(raw)}`);
      out[key] = n;
    } else {
      out[key] = raw;
    }
  }
  return { input, flags: out };
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
}
