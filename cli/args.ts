import { parseArgs } from "node:util";
import { AgentError } from "../shared/errors.js";

/** One flag of a command: `--kebab-case` on the command line, its camelCase key in the result. */
export interface FlagSpec {
  type: "string" | "number" | "boolean";
  shortFlag?: string;
  isMultiple?: boolean;
  default?: string | number | boolean;
}
export type FlagSpecs = Record<string, FlagSpec>;

type Value<S extends FlagSpec> = S["type"] extends "boolean" ? boolean : S["type"] extends "number" ? number : string;
export type FlagValues<F extends FlagSpecs> = {
  -readonly [K in keyof F]: F[K] extends { isMultiple: true }
    ? Value<F[K]>[] | undefined
    : F[K] extends { default: unknown }
      ? Value<F[K]>
      : Value<F[K]> | undefined;
};

/** Flags every command understands. */
export const GLOBAL_FLAGS = {
  json: { type: "boolean", default: false },
  debug: { type: "boolean", default: false },
} as const satisfies FlagSpecs;

export interface CommandSpec<F extends FlagSpecs> {
  /** e.g. "agent daemon <start|stop|status>" */
  usage: string;
  description: string;
  flags: F;
  /** Extra help lines (options, examples). */
  help?: string;
}

export interface Parsed<F extends FlagSpecs> {
  input: string[];
  flags: FlagValues<F & typeof GLOBAL_FLAGS>;
}

/** Thrown after a command's help was printed: the command ends there with exit 0. */
export class HelpShown extends Error {
  constructor() {
    super("help shown");
  }
}

/**
 * Parse one command's argv. `--help`/`-h` prints the command's help (then HelpShown); an
 * unknown flag, a value flag without its value or a bad number is a usage error (exit 2).
 */
export function parseCommand<F extends FlagSpecs>(argv: string[], spec: CommandSpec<F>): Parsed<F> {
  const end = argv.indexOf("--");
  const own = end < 0 ? argv : argv.slice(0, end);
  if (own.includes("--help") || own.includes("-h")) {
    process.stdout.write(helpText(spec));
    throw new HelpShown();
  }
  const command = spec.usage
    .split(" ")
    .filter((w) => /^[a-z]/.test(w))
    .slice(0, 3)
    .join(" ");
  return parseFlags(argv, { ...GLOBAL_FLAGS, ...spec.flags }, command) as Parsed<F>;
}

/** A negative number (`-5`, `-2.5`) is a value or an argument, never a flag. */
const NUMBER = /^-\d+(\.\d+)?$/;

/**
 * The parse itself is node:util's parseArgs (the one parser: grouped short flags `-fc x`,
 * `-n5`, `--key=value`, `--`); this maps our flag specs onto it and adds what it lacks:
 * numbers, `--no-<flag>` on every Node 20, negative numbers as values and arguments, and errors
 * that say which command they belong to. It runs non-strict, so every check is made here.
 */
export function parseFlags<F extends FlagSpecs>(argv: string[], flags: F, command = "agent"): { input: string[]; flags: FlagValues<F> } {
  const options: Record<string, { type: "string" | "boolean"; short?: string; multiple?: boolean }> = {};
  const keyOf = new Map<string, string>();
  for (const [key, spec] of Object.entries(flags)) {
    const name = key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`);
    options[name] = {
      type: spec.type === "boolean" ? "boolean" : "string",
      ...(spec.shortFlag ? { short: spec.shortFlag } : {}),
      ...(spec.isMultiple ? { multiple: true } : {}),
    };
    keyOf.set(name, key);
  }
  const { tokens } = parseArgs({ args: argv, options, allowPositionals: true, strict: false, tokens: true });
  const input: string[] = [];
  const out: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(flags)) if (spec.default !== undefined) out[key] = spec.default;
  let numberIndex = -1;
  for (const t of tokens) {
    if (t.kind === "positional") input.push(t.value);
    if (t.kind !== "option") continue;
    const arg = argv[t.index]!;
    const direct = keyOf.get(t.name);
    const negated = direct === undefined && t.name.startsWith("no-") ? keyOf.get(t.name.slice(3)) : undefined;
    const key = direct ?? (negated !== undefined && flags[negated]!.type === "boolean" ? negated : undefined);
    if (key === undefined) {
      // parseArgs reads `-5` as a flag (`-12` as two): it is an argument.
      if (NUMBER.test(arg)) {
        if (t.index !== numberIndex) input.push(arg);
        numberIndex = t.index;
        continue;
      }
      throw new AgentError("usage.unknown_flag", `unknown option ${t.rawName} for \`${command}\`; see --help`);
    }
    const spec = flags[key]!;
    if (spec.type === "boolean") {
      const ok = t.value === undefined || (direct !== undefined && (t.value === "true" || t.value === "false"));
      if (!ok) throw new AgentError("usage.invalid", `${t.rawName} takes no value (got ${JSON.stringify(t.value)})`);
      out[key] = direct !== undefined && t.value !== "false";
      continue;
    }
    // Without `=`, parseArgs takes the next word as the value even when it is another flag.
    if (t.value === undefined || (!t.inlineValue && t.value.startsWith("-") && t.value !== "-" && !NUMBER.test(t.value))) {
      throw new AgentError("usage.missing_value", `${t.rawName} needs a value (\`${command}\`; see --help)`);
    }
    let value: string | number = t.value;
    if (spec.type === "number") {
      value = Number(t.value);
      if (t.value.trim() === "" || !Number.isFinite(value))
        throw new AgentError("usage.invalid", `${t.rawName} needs a number, got ${JSON.stringify(t.value)}`);
    }
    if (spec.isMultiple) out[key] = [...((out[key] as unknown[] | undefined) ?? []), value];
    else out[key] = value;
  }
  return { input, flags: out as FlagValues<F> };
}

export function helpText(spec: CommandSpec<FlagSpecs>): string {
  return `\n  ${spec.description}\n\n  Usage\n    $ ${spec.usage}\n${spec.help ? `\n${spec.help.replace(/^/gm, "  ").trimEnd()}\n` : ""}\n  Global options\n    --json   print machine-readable JSON\n    --debug  show stack traces of errors\n\n`;
}
