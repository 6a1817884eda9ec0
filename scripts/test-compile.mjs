// The test loader's cache (scripts/test-loader.mjs): every .ts file the tests can load (what
// tsconfig.json includes) compiled to JavaScript in ONE esbuild call, into .tmp/test-js/, so that
// each test process reads plain JavaScript instead of starting tsx (about 0.29 s of CPU per
// process against 0.06 s for plain node).
//
// Incremental: .tmp/test-js/manifest.json records each source's mtime and size; a run compiles
// only the files that changed since (all of them on a fresh clone, where the cache is absent),
// drops the ones that are gone, and starts over when esbuild, these options or tsconfig.json change.
// A cached file is `<cache>/<path>.js` (e.g. test/foundation/x.test.ts.js) with its source map
// inline, whose one source is the .ts file's own name: the loader keeps the module's original
// URL, so stack traces point at the .ts lines.
//
// Usage: `node scripts/test-compile.mjs` (or `precompile(root)` from the test runner).
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { basename, dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

/** Where the compiled files go, under the checkout (not node_modules, which a worktree may share). */
export const cacheDirOf = (root) => join(root, ".tmp", "test-js");
/** Bump when the compile options below change: every file is compiled again. */
const OPTIONS_VERSION = 1;
export const SOURCE_EXT = /\.(ts|mts|tsx)$/;
const DECLARATION = /\.d\.m?ts$/;

/** The source directories tsconfig.json includes ("test", "scripts/**\/*.ts" → test/, scripts/). */
function includedDirs(root) {
  let include = ["shared", "daemon", "cli", "tui", "test", "scripts"];
  try {
    include = JSON.parse(readFileSync(join(root, "tsconfig.json"), "utf8")).include ?? include;
  } catch {}
  return [...new Set(include.map((p) => p.split("*")[0].replace(/\/+$/, "")).filter(Boolean))];
}

function walk(root, dir, out) {
  let names;
  try {
    names = readdirSync(join(root, dir), { withFileTypes: true });
  } catch {
    return;
  }
  for (const d of names) {
    if (d.name === "node_modules" || d.name.startsWith(".")) continue;
    const rel = dir ? `${dir}/${d.name}` : d.name;
    if (d.isDirectory()) walk(root, rel, out);
    else if (SOURCE_EXT.test(d.name) && !DECLARATION.test(d.name)) out.push(rel);
  }
}

/** The key of a source file: its mtime and size, or undefined when it is gone. */
function keyOf(path) {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? [st.mtimeMs, st.size] : undefined;
}

function readManifest(cacheDir) {
  try {
    return JSON.parse(readFileSync(join(cacheDir, "manifest.json"), "utf8"));
  } catch {
    return undefined;
  }
}

function writeAtomic(path, text) {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, text);
  renameSync(tmp, path);
}

/**
 * Brings the cache up to date (`cacheDir`: another place, for a benchmark's cold compile; the
 * loader reads only the default one). Returns what it did: { total, compiled, failed: [rel...], ms }.
 * A file esbuild cannot compile is left out of the cache (its test then fails where it is loaded,
 * through the loader's own compile, with esbuild's message).
 */
export async function precompile(root, cacheDir = cacheDirOf(root)) {
  const t0 = performance.now();
  const esbuildVersion = JSON.parse(readFileSync(createRequire(import.meta.url).resolve("esbuild/package.json"), "utf8")).version;
  const config = { v: OPTIONS_VERSION, esbuild: esbuildVersion, tsconfig: keyOf(join(root, "tsconfig.json")) ?? null };
  const old = readManifest(cacheDir);
  const sameConfig = old && JSON.stringify(old.config) === JSON.stringify(config);
  const previous = sameConfig ? old.files : {};

  const sources = [];
  for (const dir of includedDirs(root)) walk(root, dir, sources);
  const files = {};
  const stale = [];
  for (const rel of sources) {
    const key = keyOf(join(root, rel));
    if (!key) continue;
    const was = previous[rel];
    if (was && was[0] === key[0] && was[1] === key[1]) files[rel] = was;
    else stale.push([rel, key]);
  }
  // Sources gone since the last run: their compiled copies go too.
  const changed = new Set(stale.map(([rel]) => rel));
  for (const rel of Object.keys(previous)) if (!(rel in files) && !changed.has(rel)) rmSync(join(cacheDir, `${rel}.js`), { force: true });

  const failed = [];
  if (stale.length > 0) {
    const { build } = await import("esbuild");
    const compile = (rels) =>
      build({
        absWorkingDir: root,
        entryPoints: rels.map((rel) => join(root, rel)),
        outdir: join(cacheDir, "out"),
        outbase: root,
        bundle: false,
        format: "esm",
        platform: "node",
        target: "node20",
        sourcemap: "external",
        sourcesContent: false,
        write: false,
        metafile: true,
        logLevel: "silent",
      });
    let rels = stale.map(([rel]) => rel);
    let result;
    try {
      result = await compile(rels);
    } catch (e) {
      // One broken file fails the whole call: leave out the files esbuild named and compile the rest.
      const bad = new Set(
        (e.errors ?? [])
          .map((m) => m.location?.file)
          .filter(Boolean)
          .map((f) => relative(root, join(root, f)).split(sep).join("/")),
      );
      failed.push(...rels.filter((rel) => bad.has(rel)));
      rels = rels.filter((rel) => !bad.has(rel));
      if (bad.size === 0 || rels.length === 0) throw e;
      result = await compile(rels);
    }
    const byPath = new Map(result.outputFiles.map((f) => [f.path, f]));
    const keys = new Map(stale);
    for (const [out, meta] of Object.entries(result.metafile.outputs)) {
      if (!meta.entryPoint) continue;
      const rel = relative(root, join(root, meta.entryPoint)).split(sep).join("/");
      const js = byPath.get(join(root, out));
      const map = byPath.get(`${join(root, out)}.map`);
      if (!js || !map || !keys.has(rel)) continue;
      // The module keeps its own URL, so its one source is the .ts file's own name next to it.
      const sourceMap = JSON.parse(map.text);
      sourceMap.sources = [basename(rel)];
      delete sourceMap.sourceRoot;
      const inline = Buffer.from(JSON.stringify(sourceMap)).toString("base64");
      const target = join(cacheDir, `${rel}.js`);
      mkdirSync(dirname(target), { recursive: true });
      writeAtomic(target, `${js.text}//# sourceMappingURL=data:application/json;base64,${inline}\n`);
      files[rel] = keys.get(rel);
    }
  }
  if (stale.length > 0 || !sameConfig || Object.keys(previous).length !== Object.keys(files).length) {
    mkdirSync(cacheDir, { recursive: true });
    writeAtomic(join(cacheDir, "manifest.json"), JSON.stringify({ config, files }));
  }
  return { total: sources.length, compiled: stale.length - failed.length, failed, ms: performance.now() - t0 };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const root = fileURLToPath(new URL("..", import.meta.url));
  const r = await precompile(root);
  process.stdout.write(
    `compiled ${r.compiled} of ${r.total} .ts files in ${(r.ms / 1000).toFixed(2)} s${r.failed.length ? `; could not compile: ${r.failed.join(", ")}` : ""}\n`,
  );
}
