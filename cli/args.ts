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
  /**
   * The group's subcommands, when its first argument is one. Default: the `<a|b|c>` after the
   * group's name in `usage`. A first argument outside the list is a usage error (exit 2) that
   * names the closest subcommand.
   */
  subcommands?: readonly string[];
  /** Subcommands accepted but not shown in `usage` (aliases, worker-only commands). */
  hiddenSubcommands?: readonly string[];
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
  const parsed = parseFlags(argv, { ...GLOBAL_FLAGS, ...spec.flags }, command) as Parsed<F>;
  const subs = subcommandsOf(spec);
  const sub = parsed.input[0];
  if (subs && sub !== undefined && !subs.includes(sub) && !spec.hiddenSubcommands?.includes(sub)) {
    const group = command.split(" ").slice(0, 2).join(" ");
    throw new AgentError(
      "usage.unknown_command",
      `unknown subcommand "${group} ${sub}"${didYouMean(sub, subs)}; subcommands: ${subs.join(", ")}. See \`${group} --help\``,
    );
  }
  return parsed;
}

/** The subcommands a spec declares, or the `<a|b|c>` after `agent <group>` in its usage. */
export function subcommandsOf(spec: CommandSpec<FlagSpecs>): readonly string[] | undefined {
  if (spec.subcommands) return spec.subcommands;
  const m = /^agent [a-z-]+ <([a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)+)>/.exec(spec.usage);
  return m ? m[1]!.split("|") : undefined;
}

/**
 * Edit distance between two words (Damerau's restricted form: a swap of two neighbours is one
 * edit, so `lsit` is one edit from `list`).
 */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  return d[a.length]![b.length]!;
}

/**
 * The candidate closest to a mistyped word, if one is close enough to be what was meant: a
 * candidate the word begins (`comp` → `complete`), else the fewest edits, at most a third of the
 * word (at least 1, at most 3).
 */
export function closestMatch(word: string, candidates: readonly string[]): string | undefined {
  const w = word.toLowerCase();
  if (w.length >= 2) {
    const prefixed = candidates.filter((c) => c.startsWith(w));
    if (prefixed.length === 1) return prefixed[0];
  }
  const limit = Math.min(3, Math.max(1, Math.floor(w.length / 3)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates) {
    const distance = editDistance(w, c.toLowerCase());
    if (distance < bestDistance) {
      best = c;
      bestDistance = distance;
    }
  }
  return best;
}

/** ` (did you mean "x"?)` for a mistyped word, or nothing. */
export function didYouMean(word: string, candidates: readonly string[], prefix = ""): string {
  const match = closestMatch(word, candidates);
  return match === undefined ? "" : ` (did you mean "${prefix}${match}"?)`;
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
      const names = Object.keys(options).flatMap((n) => (flags[keyOf.get(n)!]!.type === "boolean" ? [n, `no-${n}`] : [n]));
      const hint = t.rawName.startsWith("--") ? didYouMean(t.name, names, "--") : "";
      throw new AgentError("usage.unknown_flag", `unknown option ${t.rawName} for \`${command}\`${hint}; see --help`);
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
