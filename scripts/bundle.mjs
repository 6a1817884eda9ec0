#!/usr/bin/env node
// Bundles the built entry points in place (`npm run build`, after tsc): every process and thread
// the product starts (the CLI, the daemon, its threads and helper processes) then loads a few
// files instead of hundreds. A CLI call and a daemon start are mostly module loading: Node 20
// has no compile cache, and its ESM loader pays a resolve, a stat, an open and a read for each
// module (docs/design.md "The bundled build"). Packages stay external (node_modules as
// installed); only our own modules are bundled, with code shared between entries split into
// `dist/chunks/` and each lazy `import()` kept lazy.
//
// A module that finds a file beside it (`new URL("./x.js", import.meta.url)`, a thread script, the
// dashboard's assets) must still see its own path, not the chunk it landed in: each module's
// `import.meta.url` is rewritten to its original path under dist/, relative to the output file
// that holds it, so those lookups land where tsc put them (the entries, bundled, are there).
import { existsSync } from "node:fs";
import { isBuiltin } from "node:module";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import * as esbuild from "esbuild";

// The build's output dir (default dist/; a test passes a temp one); its sources are beside it.
const DIST = process.argv[2] ? resolve(process.argv[2]) : join(dirname(fileURLToPath(import.meta.url)), "..", "dist");
const ROOT = dirname(DIST);
const MARK = "// agent: bundled entry (scripts/bundle.mjs)";
const REL = "__AGENT_BUNDLE_REL__";

/**
 * Everything started as a process or a thread, found by name (a path under dist/): `main.js`,
 * `*-main.js` (a process) and `*-thread.js` (a worker thread) in cli/ and daemon/.
 */
const isEntry = (name) => name === "main.js" || name.endsWith("-main.js") || name.endsWith("-thread.js");
// Also an entry, imported rather than started: the command line the CLI's main runs, which the
// test suite's CLI host (test/helpers/cli-host.ts) loads into a worker thread to run many calls.
const IMPORTED = new Set(["cli/command-line.js"]);
const FOUND = (await readdir(DIST, { recursive: true }))
  .map((p) => p.split(sep).join("/"))
  .filter((p) => IMPORTED.has(p) || ((p.startsWith("cli/") || p.startsWith("daemon/")) && isEntry(p.slice(p.lastIndexOf("/") + 1))))
  .sort();
// tsc never removes what it emitted for a source since deleted or renamed: such an entry, left
// bundled by an earlier build, would stop every later build ("bundled already", below), `agent
// update`'s included. Nothing starts it any more: it goes.
const hasSource = (e) => existsSync(join(ROOT, e.replace(/\.js$/, ".ts")));
for (const e of FOUND.filter((e) => !hasSource(e))) {
  const base = join(DIST, e.replace(/\.js$/, ""));
  for (const file of [`${base}.js`, `${base}.js.map`, `${base}.d.ts`, `${base}.d.ts.map`]) await rm(file, { force: true });
}
export const ENTRIES = FOUND.filter(hasSource);

const posix = (p) => p.split(sep).join("/");

// tsc rewrites every entry on each build; bundling a bundle would fold the chunks in again.
for (const e of ENTRIES) {
  if ((await readFile(join(DIST, e), "utf8")).includes(MARK)) {
    console.error(`bundle: dist/${e} is bundled already: run tsc first (npm run build)`);
    process.exit(1);
  }
}

const ownUrl = {
  name: "own-import-meta-url",
  setup(build) {
    build.onLoad({ filter: /\.js$/ }, async (args) => {
      if (!args.path.startsWith(DIST + sep)) return undefined;
      const text = await readFile(args.path, "utf8");
      if (!text.includes("import.meta.url")) return { contents: text, loader: "js" };
      const own = posix(relative(DIST, args.path));
      return { contents: text.replaceAll("import.meta.url", `new URL(${JSON.stringify(REL + own)}, import.meta.url).href`), loader: "js" };
    });
  },
};

// Packages stay external, except vscode-jsonrpc: every CLI call loads it (the socket client), and
// as a package it is 17 CommonJS files, each resolved, read, wrapped and scanned by Node's
// CommonJS-to-ESM lexer. Inlined, it is one chunk shared by the CLI, the TUI and the daemon.
const INLINE = /^vscode-jsonrpc(\/|$)/;
// The daemon's builds (its main, threads and helper processes) also inline zod and yaml, which
// every daemon start loads: zod is 71 ES modules (every locale included), yaml ~50 CommonJS files,
// and loading them file by file cost a start ~35 and ~35 ms of CPU, about half of that once
// inlined. (The CLI keeps them external: its calls load neither, and cli-startup's test checks so
// by package name.) A second copy of zod beside node_modules' (which the MCP SDK uses) is safe:
// zod 4 recognises its schemas by their traits, not by class identity, and no schema crosses.
const DAEMON_INLINE = /^(vscode-jsonrpc|zod|yaml)(\/|$)/;
// zod's entry re-exports every one of its 49 locales (`z.locales`, `z.core.locales`; ~200 KB of
// source each daemon start compiled): inlined, the daemon's zod keeps English, its only message
// locale (zod sets it itself), and no other: nothing here asks for another.
const ZOD_LOCALES = "agent-zod-locales";
const zodEnglishOnly = {
  name: "zod-english-only",
  setup(build) {
    build.onResolve({ filter: /^\.\.\/locales\/index\.js$/ }, (args) =>
      args.importer.includes(`${sep}node_modules${sep}zod${sep}`)
        ? { path: join(dirname(args.importer), "..", "locales", "en.js"), namespace: ZOD_LOCALES }
        : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: ZOD_LOCALES }, (args) => ({
      loader: "js",
      contents: `export { default as en } from ${JSON.stringify(args.path)};\n`,
      resolveDir: dirname(args.path),
    }));
  },
};
// An inlined CommonJS file's `require("util")` would become esbuild's `__require`, which throws in
// an ES module ("Dynamic require ... is not supported"). Each such built-in module is served
// instead by a CommonJS stand-in whose exports are getters over `process.getBuiltinModule` (Node
// 20.16+): the module loads on first use, so vscode-jsonrpc's `require("crypto")` (for pipe names
// and UUIDs, neither used by a call over the socket) does not load node:crypto on every CLI call.
const BUILTIN_NS = "agent-builtin";
const packagesExternal = (inline) => ({
  name: "packages-external",
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.kind === "require-call" && args.importer.includes(`${sep}node_modules${sep}`) && isBuiltin(args.path)) {
        return { path: args.path.replace(/^node:/, ""), namespace: BUILTIN_NS };
      }
      if (args.path.startsWith("node:") || inline.test(args.path)) return undefined;
      return { path: args.path, external: true };
    });
    build.onLoad({ filter: /.*/, namespace: BUILTIN_NS }, async (args) => {
      const name = `node:${args.path}`;
      const keys = Object.keys(await import(name)).filter((k) => k !== "default");
      const getters = keys.map((k) => `${JSON.stringify(k)}: { enumerable: true, get: () => load()[${JSON.stringify(k)}] }`);
      return {
        loader: "js",
        contents: `let m;\nconst load = () => (m ??= process.getBuiltinModule(${JSON.stringify(name)}));\nmodule.exports = Object.defineProperties({}, {\n${getters.join(",\n")}\n});\n`,
      };
    });
  },
});

// One build for the CLI's entry (cli/), and one for each of the daemon's entries (its main, its
// helper processes, its threads), each split into chunks on its own: esbuild puts each module in a
// chunk by the set of entries (lazy imports included) that reach it, so one build across all of
// them made many small chunks (a CLI call loaded 21 files, a daemon start with its first threads
// 88), and each file costs Node 20's ESM loader about 0.3 ms of CPU (now 15 and 72). No process or
// thread loads two builds: each starts at one entry, and its lazy imports stay in that entry's build.
const GROUPS = [ENTRIES.filter((e) => e.startsWith("cli/")), ...ENTRIES.filter((e) => e.startsWith("daemon/")).map((e) => [e])];
const builds = await Promise.all(
  GROUPS.map((group) =>
    esbuild.build({
      entryPoints: group.map((e) => join(DIST, e)),
      outbase: DIST,
      outdir: DIST,
      allowOverwrite: true,
      bundle: true,
      splitting: true,
      format: "esm",
      platform: "node",
      target: "node20",
      chunkNames: "chunks/[name]-[hash]",
      sourcemap: false,
      write: false,
      logLevel: "warning",
      plugins: group[0].startsWith("cli/") ? [packagesExternal(INLINE), ownUrl] : [zodEnglishOnly, packagesExternal(DAEMON_INLINE), ownUrl],
    }),
  ),
);
const result = { outputFiles: builds.flatMap((b) => b.outputFiles) };

for (const out of result.outputFiles) {
  const rel = posix(relative(DIST, out.path));
  const up = "../".repeat(rel.split("/").length - 1) || "./";
  let text = out.text.replaceAll(REL, up);
  if (ENTRIES.includes(rel)) {
    // After a hashbang (the CLI's), which must stay the first line.
    const cut = text.startsWith("#!") ? text.indexOf("\n") + 1 : 0;
    text = `${text.slice(0, cut)}${MARK}\n${text.slice(cut)}`;
  }
  await mkdir(dirname(out.path), { recursive: true });
  await writeFile(out.path, text);
}
// Chunks are named by their content's hash, so a new build's differ from the old ones. A process
// started from the previous build that outlives it (a kanban worker `agent update` leaves
// running, an open TUI, `agent mcp serve` under another app) still loads its lazy `import()`s
// from the chunks of its own build: the previous build's are kept, older ones go.
const MANIFEST = join(DIST, "chunks", "builds.json");
const written = result.outputFiles.map((o) => posix(relative(join(DIST, "chunks"), o.path))).filter((n) => !n.startsWith("../"));
let previous = [];
try {
  previous = JSON.parse(await readFile(MANIFEST, "utf8")).current ?? [];
} catch {}
const keep = new Set([...written, ...previous, "builds.json"]);
await mkdir(join(DIST, "chunks"), { recursive: true });
for (const name of await readdir(join(DIST, "chunks"))) if (!keep.has(name)) await rm(join(DIST, "chunks", name), { recursive: true, force: true });
await writeFile(MANIFEST, `${JSON.stringify({ current: written })}\n`);
console.log(`bundled ${ENTRIES.length} entries into ${result.outputFiles.length} files`);
