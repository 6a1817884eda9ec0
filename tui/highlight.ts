import { createRequire } from "node:module";
import type { Worker } from "node:worker_threads";
import type { Run } from "./text.js";
import { fg, type Role } from "./theme.js";

/**
 * Syntax highlighting for the TUI: highlight.js's core, with a language registered the first
 * time a block in it is drawn (the set of highlight.js's "common" build), its classes mapped to
 * the palette's syntax roles (tui/theme.ts). Unified diffs are coloured here by their line
 * marks. The input must already be clean of terminal escapes; the output is runs to wrap.
 *
 * A small block is highlighted as it is drawn. A large one (highlight.js takes tens of
 * milliseconds for a few hundred lines) is drawn in one colour first and highlighted in a worker
 * thread; when the result is in, `onHighlighted` listeners redraw, and the cached result is used.
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

/**
 * The part of highlight.js's API used here, declared locally: its own types reference the DOM
 * library, which would replace Node's fetch types for the whole program.
 */
type LanguageFn = (hljs: unknown) => unknown;
interface HLJSApi {
  getLanguage(name: string): unknown;
  registerLanguage(name: string, language: LanguageFn): void;
  highlight(code: string, options: { language: string; ignoreIllegals?: boolean }): { value: string };
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
/** Up to this size a block is highlighted as it is drawn; larger ones in the worker. */
const SYNC_LINES = 60;
const SYNC_CHARS = 4000;

/** The worker's source (plain CommonJS, so it runs the same from dist/ and under tsx). */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const req = require("node:module").createRequire(workerData.base);
const hljs = req("highlight.js/lib/core");
parentPort.on("message", ({ id, code, lang }) => {
  let html = null;
  try {
    if (!hljs.getLanguage(lang)) hljs.registerLanguage(lang, req("highlight.js/lib/languages/" + lang));
    html = hljs.highlight(code, { language: lang, ignoreIllegals: true }).value;
  } catch {}
  parentPort.postMessage({ id, html });
});`;

let worker: Worker | null = null;
let nextJob = 0;
/** The job in the worker, and the newest one waiting for it (a streaming block: only its latest text). */
let running: { id: number; key: string; code: string; lang: string; base: string } | null = null;
let waiting: { key: string; code: string; lang: string; base: string } | null = null;
const listeners = new Set<(code: string) => void>();

/** Call `fn` when a block drawn in one colour has been highlighted (draw again). */
export function onHighlighted(fn: (code: string) => void): () => void {
  listeners.add(fn);
  return () => listeners.delete(fn);
}

function startWorker(): Worker {
  const { Worker: WorkerClass } = require("node:worker_threads") as typeof import("node:worker_threads");
  // No loader flags of the parent (tsx under the tests): the worker is plain CommonJS.
  const w = new WorkerClass(WORKER_SOURCE, { eval: true, execArgv: [], workerData: { base: import.meta.url } });
  w.on("message", (m: { id: number; html: string | null }) => {
    const job = running;
    running = null;
    w.unref();
    if (job && job.id === m.id && m.html !== null) {
      remember(job.key, htmlToLines(m.html, job.base));
      for (const fn of listeners) fn(job.code);
    }
    pump();
  });
  w.on("error", () => {
    // Without the worker, large blocks stay in one colour.
    worker = null;
    running = null;
  });
  // After the listeners (adding one refs the worker again): an idle worker keeps no process alive.
  w.unref();
  return w;
}

/** Start the worker while nothing is drawn (the TUI calls it after its first frame), so a draw never pays for it. */
export function prepareHighlighter(): void {
  try {
    worker ??= startWorker();
  } catch {
    // Large blocks stay in one colour.
  }
}

function pump(): void {
  if (running || !waiting) return;
  const job = { ...waiting, id: nextJob++ };
  waiting = null;
  if (cache.has(job.key)) {
    pump();
    return;
  }
  try {
    worker ??= startWorker();
  } catch {
    return;
  }
  running = job;
  // Referenced while it works (its result is awaited), unreferenced when idle.
  worker.ref();
  worker.postMessage({ id: job.id, code: job.code, lang: job.lang });
}

function remember(key: string, lines: Run[][]): void {
  if (cache.size >= CACHE_ENTRIES) cache.delete(cache.keys().next().value!);
  cache.set(key, lines);
}

/**
 * Code in a language as runs split into lines; `base` is the style of text no scope covers.
 * Null when the language is unknown (the caller draws the code in one style).
 */
export function highlightCode(code: string, lang: string | undefined, base = "", options: { sync?: boolean } = {}): Run[][] | null {
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
    const id = ALIASES.get(name);
    if (!id) return null;
    if (!options.sync && (code.length > SYNC_CHARS || lineCount(code) > SYNC_LINES)) {
      // Drawn in one colour now, highlighted in the worker.
      if (running?.key !== key) waiting = { key, code, lang: id, base };
      pump();
      return null;
    }
    try {
      languageId(id);
      lines = htmlToLines(hljs!.highlight(code, { language: id, ignoreIllegals: true }).value, base);
    } catch {
      return null;
    }
  }
  remember(key, lines);
  return lines;
}

function lineCount(code: string): number {
  let n = 1;
  for (let i = code.indexOf("\n"); i >= 0 && n <= SYNC_LINES; i = code.indexOf("\n", i + 1)) n++;
  return n;
}

/** Drop what was highlighted with the old palette. */
export function clearHighlightCache(): void {
  cache.clear();
}
