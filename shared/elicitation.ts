/**
 * The form of an MCP elicitation request (`elicitation/create`): a flat object schema whose
 * properties are strings (optionally with a format), numbers, integers, booleans, single-choice
 * enums (`enum`, `enum` + `enumNames`, `oneOf` of `{const, title}`) and multi-choice enums (an
 * array of such). The daemon checks an answer with `checkElicitationAnswer`; the line-mode chat
 * and the TUI dialog read one field at a time with `parseFieldInput`. Nothing here trusts the
 * server: titles and descriptions are shown only after terminal-escape cleaning by the caller.
 */

export type ElicitValue = string | number | boolean | string[];

export interface ElicitChoice {
  value: string;
  label: string;
}

export interface ElicitField {
  name: string;
  /** The title, else the name. */
  label: string;
  description: string;
  type: "string" | "number" | "integer" | "boolean" | "choice" | "choices";
  required: boolean;
  default?: ElicitValue;
  /** choice / choices. */
  choices?: ElicitChoice[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
}

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});
const num = (v: unknown): number | undefined => (typeof v === "number" && Number.isFinite(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

function choicesOf(p: Record<string, unknown>): ElicitChoice[] | null {
  if (Array.isArray(p.enum)) {
    const names = Array.isArray(p.enumNames) ? p.enumNames : [];
    return p.enum.map((v, i) => ({ value: String(v), label: typeof names[i] === "string" ? (names[i] as string) : String(v) }));
  }
  const list = Array.isArray(p.oneOf) ? p.oneOf : Array.isArray(p.anyOf) ? p.anyOf : null;
  if (list) return list.map((o) => ({ value: String(obj(o).const), label: str(obj(o).title) ?? String(obj(o).const) }));
  return null;
}

/** The fields of a requested schema, in its order; a property of a kind MCP does not allow is an error. */
export function elicitationFields(schema: unknown): ElicitField[] {
  const s = obj(schema);
  const required = new Set(Array.isArray(s.required) ? s.required.filter((r): r is string => typeof r === "string") : []);
  const fields: ElicitField[] = [];
  for (const [name, raw] of Object.entries(obj(s.properties))) {
    const p = obj(raw);
    const base = { name, label: str(p.title) ?? name, description: str(p.description) ?? "", required: required.has(name) };
    const choices = choicesOf(p);
    let field: ElicitField;
    if (p.type === "array") {
      const items = choicesOf(obj(p.items));
      if (!items) throw new Error(`field ${name}: an array must list its choices (items.enum or items.anyOf)`);
      field = { ...base, type: "choices", choices: items, minItems: num(p.minItems), maxItems: num(p.maxItems) };
      if (Array.isArray(p.default)) field.default = p.default.map(String);
    } else if (choices) {
      field = { ...base, type: "choice", choices };
      if (p.default !== undefined) field.default = String(p.default);
    } else if (p.type === "string") {
      field = { ...base, type: "string", format: str(p.format), minLength: num(p.minLength), maxLength: num(p.maxLength) };
      if (typeof p.default === "string") field.default = p.default;
    } else if (p.type === "number" || p.type === "integer") {
      field = { ...base, type: p.type, minimum: num(p.minimum), maximum: num(p.maximum) };
      if (num(p.default) !== undefined) field.default = num(p.default);
    } else if (p.type === "boolean") {
      field = { ...base, type: "boolean" };
      if (typeof p.default === "boolean") field.default = p.default;
    } else throw new Error(`field ${name}: type ${JSON.stringify(p.type)} is not one a form can ask (string, number, integer, boolean, enum)`);
    fields.push(field);
  }
  return fields;
}

/** A field's kind and limits, for a prompt: "integer 1–100", "yes/no", "one of: a, b". */
export function describeField(f: ElicitField): string {
  const range = (lo?: number, hi?: number) =>
    lo !== undefined && hi !== undefined ? ` ${lo}–${hi}` : lo !== undefined ? ` ≥ ${lo}` : hi !== undefined ? ` ≤ ${hi}` : "";
  switch (f.type) {
    case "boolean":
      return "yes/no";
    case "number":
    case "integer":
      return `${f.type}${range(f.minimum, f.maximum)}`;
    case "choice":
      return `one of: ${f.choices!.map((c) => (c.label === c.value ? c.value : `${c.value} (${c.label})`)).join(", ")}`;
    case "choices":
      return `comma-separated, from: ${f.choices!.map((c) => (c.label === c.value ? c.value : `${c.value} (${c.label})`)).join(", ")}`;
    default:
      return f.format ? `text, ${f.format}` : "text";
  }
}

function checkValue(f: ElicitField, v: unknown): string | null {
  switch (f.type) {
    case "boolean":
      return typeof v === "boolean" ? null : "must be yes or no";
    case "number":
    case "integer": {
      if (typeof v !== "number" || !Number.isFinite(v)) return `must be a${f.type === "integer" ? "n integer" : " number"}`;
      if (f.type === "integer" && !Number.isInteger(v)) return "must be an integer";
      if (f.minimum !== undefined && v < f.minimum) return `must be at least ${f.minimum}`;
      if (f.maximum !== undefined && v > f.maximum) return `must be at most ${f.maximum}`;
      return null;
    }
    case "choice":
      return typeof v === "string" && f.choices!.some((c) => c.value === v) ? null : `must be one of ${f.choices!.map((c) => c.value).join(", ")}`;
    case "choices": {
      if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || !f.choices!.some((c) => c.value === x)))
        return `must be a list from ${f.choices!.map((c) => c.value).join(", ")}`;
      if (f.minItems !== undefined && v.length < f.minItems) return `needs at least ${f.minItems}`;
      if (f.maxItems !== undefined && v.length > f.maxItems) return `takes at most ${f.maxItems}`;
      return null;
    }
    default: {
      if (typeof v !== "string") return "must be text";
      if (f.minLength !== undefined && v.length < f.minLength) return `must be at least ${f.minLength} characters`;
      if (f.maxLength !== undefined && v.length > f.maxLength) return `must be at most ${f.maxLength} characters`;
      if (f.format === "email" && !/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(v)) return "must be an email address";
      if (f.format === "date" && !/^\d{4}-\d{2}-\d{2}$/.test(v)) return "must be a date (YYYY-MM-DD)";
      if (f.format === "uri" && !/^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(v)) return "must be a URI";
      return null;
    }
  }
}

/**
 * What a person typed for a field: the value, `undefined` for nothing (the default, or left out),
 * or an error to show before asking again.
 */
export function parseFieldInput(f: ElicitField, text: string): { value?: ElicitValue; error?: string } {
  const t = text.trim();
  if (!t) {
    if (f.default !== undefined) return { value: f.default };
    return f.required ? { error: "is required" } : {};
  }
  let v: unknown = t;
  if (f.type === "boolean") {
    const w = t.toLowerCase();
    v = ["y", "yes", "true", "1", "on"].includes(w) ? true : ["n", "no", "false", "0", "off"].includes(w) ? false : t;
  } else if (f.type === "number" || f.type === "integer") v = /^[-+]?(\d+\.?\d*|\.\d+)(e[-+]?\d+)?$/i.test(t) ? Number(t) : Number.NaN;
  else if (f.type === "choice") v = f.choices!.find((c) => c.value === t || c.label.toLowerCase() === t.toLowerCase())?.value ?? t;
  else if (f.type === "choices")
    v = t
      .split(",")
      .map((x) => x.trim())
      .filter(Boolean)
      .map((x) => f.choices!.find((c) => c.value === x || c.label.toLowerCase() === x.toLowerCase())?.value ?? x);
  else v = text;
  const error = checkValue(f, v);
  return error ? { error } : { value: v as ElicitValue };
}

/** Check a whole answer against the schema: null when it fits, else what is wrong (field by field). */
export function checkElicitationAnswer(schema: unknown, content: Record<string, unknown>): string | null {
  const fields = elicitationFields(schema);
  const known = new Set(fields.map((f) => f.name));
  const problems: string[] = [];
  for (const k of Object.keys(content)) if (!known.has(k)) problems.push(`${k} is not a field of this form`);
  for (const f of fields) {
    const v = content[f.name];
    if (v === undefined) {
      if (f.required) problems.push(`${f.name} is required`);
      continue;
    }
    const e = checkValue(f, v);
    if (e) problems.push(`${f.name} ${e}`);
  }
  return problems.length ? problems.join("; ") : null;
}
