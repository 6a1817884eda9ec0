import { spawn } from "node:child_process";
import { basename, extname } from "node:path";
import type { LintResult } from "../messages.js";

/** At most this many problems are reported; the first one is usually the one that matters. */
const MAX_PROBLEMS = 20;
const PYTHON_TIMEOUT_MS = 10_000;

const JS_TS = new Set([".js", ".mjs", ".cjs", ".jsx", ".ts", ".mts", ".cts", ".tsx"]);

type Ts = typeof import("typescript");
let tsModule: Promise<Ts> | null = null;

// typescript is big (several MB); load it once per worker, only when a JS/TS file is checked.
function loadTs(): Promise<Ts> {
  tsModule ??= import("typescript").then((m) => ((m as { default?: Ts }).default ?? m) as Ts);
  return tsModule;
}

function lineCol(text: string, offset: number): string {
  const before = text.slice(0, Math.max(0, offset));
  const line = before.split("\n").length;
  const col = offset - before.lastIndexOf("\n");
  return `${line}:${col}`;
}

function lintJson(path: string, content: string): LintResult {
  try {
    JSON.parse(content);
    return { status: "ok", output: "" };
  } catch (error) {
    const message = (error as Error).message;
    const at = /position (\d+)/.exec(message);
    return { status: "error", output: `${basename(path)}${at ? `:${lineCol(content, Number(at[1]))}` : ""}: ${message}` };
  }
}

async function lintYaml(path: string, content: string): Promise<LintResult> {
  // The daemon's builds inline yaml (scripts/bundle.mjs), where a lazily imported CommonJS
  // module's namespace has only `default`; as a package its exports are named too.
  const loaded = await import("yaml");
  const YAML = typeof loaded.parseAllDocuments === "function" ? loaded : loaded.default;
  const problems: string[] = [];
  for (const doc of YAML.parseAllDocuments(content)) {
    for (const error of doc.errors) {
      const pos = error.linePos?.[0];
      problems.push(`${basename(path)}${pos ? `:${pos.line}:${pos.col}` : ""}: ${error.message.split("\n")[0]}`);
    }
  }
  return problems.length ? { status: "error", output: problems.slice(0, MAX_PROBLEMS).join("\n") } : { status: "ok", output: "" };
}

async function lintJsTs(path: string, content: string): Promise<LintResult> {
  const ts = await loadTs();
  // transpileModule reports syntactic diagnostics only: no type checking, no other files read.
  const { diagnostics = [] } = ts.transpileModule(content, {
    fileName: basename(path),
    reportDiagnostics: true,
    compilerOptions: { allowJs: true, jsx: ts.JsxEmit.Preserve, target: ts.ScriptTarget.ESNext, module: ts.ModuleKind.ESNext, noEmit: false },
  });
  const problems = diagnostics
    .filter((d) => d.category === ts.DiagnosticCategory.Error && d.file)
    .map((d) => `${basename(path)}:${lineCol(content, d.start ?? 0)}: TS${d.code}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`);
  return problems.length ? { status: "error", output: problems.slice(0, MAX_PROBLEMS).join("\n") } : { status: "ok", output: "" };
}

const PY_CHECK = [
  "import ast, sys",
  "src = sys.stdin.buffer.read()",
  "try:",
  "    ast.parse(src, filename=sys.argv[1])",
  "except SyntaxError as e:",
  "    print(f'{sys.argv[1]}:{e.lineno}:{e.offset}: {e.msg}')",
  "    sys.exit(1)",
].join("\n");

function lintPython(path: string, content: string): Promise<LintResult> {
  return new Promise((resolve) => {
    const child = spawn("python3", ["-c", PY_CHECK, basename(path)], { stdio: ["pipe", "pipe", "pipe"] });
    // Our own timer (spawn's `timeout` option leaves its timer running when the spawn fails).
    const timer = setTimeout(() => child.kill("SIGKILL"), PYTHON_TIMEOUT_MS);
    timer.unref();
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (out += d));
    child.on("error", (error) => {
      clearTimeout(timer);
      const missing = (error as NodeJS.ErrnoException).code === "ENOENT";
      resolve({ status: "skipped", output: missing ? "python3 not found; Python syntax not checked" : `python3 could not run: ${error.message}` });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      if (code === 0) resolve({ status: "ok", output: "" });
      else if (code === 1 && out.trim()) resolve({ status: "error", output: out.trim().split("\n").slice(-MAX_PROBLEMS).join("\n") });
      else resolve({ status: "skipped", output: `python3 syntax check did not finish (${signal ?? `exit ${code}`})` });
    });
    child.stdin.on("error", () => undefined); // python exiting early must not crash the worker
    child.stdin.end(content);
  });
}

/** Syntax-only check of a file's new content, chosen by extension. */
export async function lint(path: string, content: string): Promise<LintResult> {
  const ext = extname(path).toLowerCase();
  try {
    if (ext === ".json") return lintJson(path, content);
    if (ext === ".yaml" || ext === ".yml") return await lintYaml(path, content);
    if (JS_TS.has(ext)) return await lintJsTs(path, content);
    if (ext === ".py" || ext === ".pyi") return await lintPython(path, content);
  } catch (error) {
    return { status: "skipped", output: `syntax check failed to run: ${(error as Error).message}` };
  }
  return { status: "skipped", output: ext ? `no syntax check for ${ext} files` : "no syntax check for files without an extension" };
}
