import { basename, extname } from "node:path";

/** A language server the daemon knows how to run and install. */
export interface ServerSpec {
  id: string;
  name: string;
  /** File extensions (lower case, with the dot) → LSP language id. */
  languages: Record<string, string>;
  /** Whole file names it serves besides extensions (e.g. `.bashrc`). */
  fileNames?: Record<string, string>;
  /** The executable in `node_modules/.bin` and its arguments. */
  bin: string;
  args: string[];
  /** npm packages (exact versions) that provide `bin`, installed together. */
  packages: string[];
  /** How a write's diagnostics are read: pushed by the server (default), or pulled from tsserver. */
  diagnostics?: "push" | "tsserver";
  /** Sent as `initializationOptions` unless the config overrides it. */
  initializationOptions?: Record<string, unknown>;
}

/**
 * The known servers, each served from the npm registry. A file is served by the first spec
 * whose extensions (or file names) list it.
 */
const SERVER_LIST: ServerSpec[] = [
  {
    id: "typescript",
    name: "TypeScript / JavaScript (typescript-language-server)",
    languages: {
      ".ts": "typescript",
      ".mts": "typescript",
      ".cts": "typescript",
      ".tsx": "typescriptreact",
      ".js": "javascript",
      ".mjs": "javascript",
      ".cjs": "javascript",
      ".jsx": "javascriptreact",
    },
    bin: "typescript-language-server",
    args: ["--stdio"],
    diagnostics: "tsserver",
    // typescript 7.x has no tsserver, which typescript-language-server drives.
    packages: ["typescript-language-server@5.3.0", "typescript@6.0.3"],
  },
  {
    id: "pyright",
    name: "Python (pyright)",
    languages: { ".py": "python", ".pyi": "python" },
    bin: "pyright-langserver",
    args: ["--stdio"],
    packages: ["pyright@1.1.414"],
  },
  {
    id: "json",
    name: "JSON (vscode-langservers-extracted)",
    languages: { ".json": "json", ".jsonc": "jsonc" },
    bin: "vscode-json-language-server",
    args: ["--stdio"],
    packages: ["vscode-langservers-extracted@4.10.0"],
    initializationOptions: { provideFormatter: false },
  },
  {
    id: "yaml",
    name: "YAML (yaml-language-server)",
    languages: { ".yaml": "yaml", ".yml": "yaml" },
    bin: "yaml-language-server",
    args: ["--stdio"],
    packages: ["yaml-language-server@1.25.0"],
  },
  {
    id: "css",
    name: "CSS / SCSS / Less (vscode-langservers-extracted)",
    languages: { ".css": "css", ".scss": "scss", ".less": "less" },
    bin: "vscode-css-language-server",
    args: ["--stdio"],
    packages: ["vscode-langservers-extracted@4.10.0"],
  },
  {
    id: "html",
    name: "HTML (vscode-langservers-extracted)",
    languages: { ".html": "html", ".htm": "html" },
    bin: "vscode-html-language-server",
    args: ["--stdio"],
    packages: ["vscode-langservers-extracted@4.10.0"],
  },
  {
    id: "bash",
    name: "Bash (bash-language-server)",
    languages: { ".sh": "shellscript", ".bash": "shellscript" },
    fileNames: { ".bashrc": "shellscript", ".bash_profile": "shellscript", ".profile": "shellscript" },
    bin: "bash-language-server",
    args: ["start"],
    packages: ["bash-language-server@5.8.1"],
  },
];
export const SERVERS: readonly ServerSpec[] = Object.freeze(SERVER_LIST);

export function serverById(id: string): ServerSpec | undefined {
  return SERVERS.find((s) => s.id === id);
}

/** The server for a file and its language id, or null when no known server serves it. */
export function serverForFile(path: string): { spec: ServerSpec; languageId: string; by: string } | null {
  const name = basename(path);
  const ext = extname(name).toLowerCase();
  for (const spec of SERVERS) {
    const byName = spec.fileNames?.[name];
    if (byName) return { spec, languageId: byName, by: `file name ${name}` };
    const byExt = ext ? spec.languages[ext] : undefined;
    if (byExt) return { spec, languageId: byExt, by: `extension ${ext}` };
  }
  return null;
}
