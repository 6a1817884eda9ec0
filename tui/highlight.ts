import { createRequire } from "node:module";
import type { HLJSApi, LanguageFn } from "highlight.js";
import type { Run } from "./text.js";
import { fg, type Role } from "./theme.js";

/**
 * Syntax highlighting for the TUI: highlight.js's core, with a language registered the first
 * time a block in it is drawn (the set of highlight.js's "common" build), its classes mapped to
 * the palette's syntax roles (tui/theme.ts). Unified diffs are coloured here by their line
 * marks. The input must already be clean of terminal escapes; the output is runs to wrap.
 */

const require = createRequire(import.meta.url);

/** highlight.js's common languages, and the names code fences use for them. */
const LANGUAGES: Record<string, string[]> = {
  bash: ["bash", "sh", "zsh", "shell-script"],
  c: ["c", "h"],
  cpp: ["cpp", "c++", "cc", "cxx", "hpp", "hh"],
  csharp: ["csharp", "cs", "c#"],
  css: ["css"],
  go: ["go", "golang"],
  graphql: ["graphql", "gql"],
  ini: ["ini", "toml", "cfg", "conf"],
  java: ["java"],
  javascript: ["javascript", "js", "jsx", "mjs", "cjs", "node"],
  json: ["json", "jsonc", "json5"],
  kotlin: ["kotlin", "kt", "kts"],
  less: ["less"],
  lua: ["lua"],
  makefile: ["makefile", "make", "mk"],
  markdown: ["markdown", "md"],
  objectivec: ["objectivec", "objc", "obj-c", "m"],
  perl: ["perl", "pl", "pm"],
  php: ["php"],
  python: ["python", "py", "py3", "gyp"],
  r: ["r"],
  ruby: ["ruby", "rb", "gemspec"],
  rust: ["rust", "rs"],
  scss: ["scss"],
  shell: ["shell", "console", "shellsession"],
  sql: ["sql"],
  swift: ["swift"],
  typescript: ["typescript", "ts", "tsx", "mts", "cts"],
  xml: ["xml", "html", "xhtml", "svg", "plist"],
  yaml: ["yaml", "yml"],
};
const ALIASES = new Map(Object.entries(LANGUAGES).flatMap(([id, names]) => names.map((n) => [n, id] as const)));

/** File extensions to languages, for a file a tool read or wrote. */
export function languageOfPath(path: string): string | null {
  const base = path.split("/").pop() ?? "";
  if (/^(makefile|gnumakefile)$/i.test(base)) return "makefile";
  if (/^dockerfile$/i.test(base)) return null;
  const ext = /\.([a-z0-9+#]+)$/i.exec(base)?.[1]?.toLowerCase();
  return ext ? (ALIASES.get(ext) ?? null) : null;
}

let hljs: HLJSApi | null = null;

function languageId(lang: string): string | null {
  const id = ALIASES.get(lang.trim().toLowerCase());
  if (!id) return null;
  hljs ??= require("highlight.js/lib/core") as HLJSApi;
  if (!hljs.getLanguage(id)) hljs.registerLanguage(id, require(`highlight.js/lib/languages/${id}`) as LanguageFn);
  return id;
}

/** highlight.js's scopes (first class of a span) to the palette's roles. */
const SCOPES: Record<string, Role> = {
  keyword: "synKeyword",
  "selector-tag": "synKeyword",
  doctag: "synKeyword",
  operator: "synKeyword",
  built_in: "synBuiltin",
  symbol: "synBuiltin",
  bullet: "synBuiltin",
  "selector-pseudo": "synBuiltin",
  type: "synType",
  "title.class": "synType",
  "title.class.inherited": "synType",
  literal: "synNumber",
  number: "synNumber",
  string: "synString",
  regexp: "synString",
  char: "synString",
  "selector-attr": "synString",
  comment: "synComment",
  quote: "synComment",
  title: "synFunction",
  "title.function": "synFunction",
  "title.function.invoke": "synFunction",
  section: "heading",
  attr: "synAttr",
  attribute: "synAttr",
  property: "synAttr",
  "selector-class": "synAttr",
  "selector-id": "synAttr",
  meta: "synMeta",
  "meta keyword": "synMeta",
  variable: "synVariable",
  "template-variable": "synVariable",
  "variable.language": "synKeyword",
  params: "text",
  subst: "text",
  tag: "synTag",
  name: "synTag",
  addition: "diffAdd",
  deletion: "diffDel",
  link: "link",
  emphasis: "text",
  strong: "text",
};

function roleOf(classes: string): Role | null {
  // "hljs-title function_" → "title.function"
  const parts = classes.split(/\s+/).map((c) => c.replace(/^hljs-/, "").replace(/_+$/, ""));
  const scope = parts.join(".");
  return SCOPES[scope] ?? SCOPES[parts[0]!] ?? null;
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', "#x27": "'", "#39": "'" };
const decode = (s: string) => s.replace(/&(amp|lt|gt|quot|#x27|#39);/g, (_, e: string) => ENTITIES[e]!);

/** highlight.js's HTML to runs split into lines. */
function htmlToLines(html: string, base: string): Run[][] {
  const lines: Run[][] = [[]];
  const stack: string[] = [];
  const style = () => {
    for (let i = stack.length - 1; i >= 0; i--) if (stack[i]) return stack[i]!;
    return base;
  };
  for (const m of html.matchAll(/<span class="([^"]+)">|<\/span>|[^<]+/g)) {
    if (m[1] !== undefined) {
      const role = roleOf(m[1]);
      stack.push(role ? fg(role) : "");
    } else if (m[0] === "</span>") stack.pop();
    else {
      const text = decode(m[0]);
      const s = style();
      text.split("\n").forEach((piece, i) => {
        if (i > 0) lines.push([]);
        if (piece) lines[lines.length - 1]!.push({ text: piece, style: s });
      });
    }
  }
  return lines;
}

/** A unified diff's lines coloured by their marks. */
export function diffLines(text: string): Run[][] {
  return text.split("\n").map((line) => {
    const role: Role | null = /^(\+\+\+|---) /.test(line)
      ? null
      : line.startsWith("+")
        ? "diffAdd"
        : line.startsWith("-")
          ? "diffDel"
          : line.startsWith("@@")
            ? "diffHunk"
            : /^(diff |index |\*\*\* )/.test(line)
              ? "muted"
              : null;
    const bold = /^(\+\+\+|---|diff |\*\*\* ) ?/.test(line) && !/^(\+|-)[^+-]/.test(line) ? "{bold}" : "";
    return [{ text: line, style: role ? fg(role) : bold }];
  });
}

/** Whether text reads as a unified diff (a hunk header, or file headers). */
export function looksLikeDiff(text: string): boolean {
  return /^@@ -\d+(,\d+)? \+\d+(,\d+)? @@/m.test(text) || /^--- .*\n\+\+\+ /m.test(text) || /^\*\*\* (Begin Patch|Update File|Add File)/m.test(text);
}

const cache = new Map<string, Run[][]>();
const CACHE_ENTRIES = 64;
const MAX_HIGHLIGHT_CHARS = 200_000;

/**
 * Code in a language as runs split into lines; `base` is the style of text no scope covers.
 * Null when the language is unknown (the caller draws the code in one style).
 */
export function highlightCode(code: string, lang: string | undefined, base = ""): Run[][] | null {
  const name = (lang ?? "").trim().toLowerCase().split(/\s+/)[0] ?? "";
  if (!name) return null;
  if (!fg("synKeyword")) return null;
  const key = `${name}\u0000${base}\u0000${code}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let lines: Run[][] | null;
  if (name === "diff" || name === "patch") lines = diffLines(code);
  else {
    if (code.length > MAX_HIGHLIGHT_CHARS) return null;
    const id = languageId(name);
    if (!id) return null;
    try {
      lines = htmlToLines(hljs!.highlight(code, { language: id, ignoreIllegals: true }).value, base);
    } catch {
      return null;
    }
  }
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, lines);
  return lines;
}

/** Drop what was highlighted with the old palette. */
export function clearHighlightCache(): void {
  cache.clear();
}
