// Module hooks of the tests' TypeScript loader (registered by scripts/test-loader.mjs). On the
// hot path of every test process: builtins only, esbuild loaded only for a file not in the cache.
//
// resolve: `./x.js` names `./x.ts` when only the .ts exists (also .mjs → .mts, .js/.jsx → .tsx),
//          as TypeScript's NodeNext imports are written.
// load:    a .ts/.mts/.tsx file is served as an ES module under its ORIGINAL URL (so
//          import.meta.url and every path relative to it stay as they are): the compiled copy
//          from .tmp/test-js/ when the source's mtime and size are the ones it was compiled
//          from (scripts/test-compile.mjs), else compiled here, alone, with esbuild's transform
//          (a file written while the tests run, or outside the checkout).
import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const CACHE = join(ROOT, ".tmp", "test-js");
const SOURCE = /\.(ts|mts|tsx)$/;
const JS = /\.(js|mjs|jsx)$/;
const TS_FOR = { ".js": [".ts", ".tsx"], ".mjs": [".mts"], ".jsx": [".tsx"] };

export async function resolve(specifier, context, nextResolve) {
  const parent = context.parentURL;
  // Not inside a package (node_modules holds JavaScript): one stat less for each of their imports.
  if (parent?.startsWith("file:") && JS.test(specifier) && /^(\.{0,2}\/|file:)/.test(specifier) && !parent.includes("/node_modules/")) {
    const url = new URL(specifier, parent);
    if (!existsSync(url)) {
      const ext = JS.exec(specifier)[0];
      for (const ts of TS_FOR[ext]) {
        const candidate = specifier.slice(0, -ext.length) + ts;
        if (existsSync(new URL(candidate, parent))) return nextResolve(candidate, context);
      }
    }
  }
  return nextResolve(specifier, context);
}

let manifest;
function cached(path) {
  if (!path.startsWith(ROOT)) return undefined;
  if (manifest === undefined) {
    try {
      manifest = JSON.parse(readFileSync(join(CACHE, "manifest.json"), "utf8"));
      // A tsconfig.json changed since the cache was made: compile here until the runner renews it.
      const st = statSync(join(ROOT, "tsconfig.json"), { throwIfNoEntry: false });
      if (!st || st.mtimeMs !== manifest.config?.tsconfig?.[0] || st.size !== manifest.config?.tsconfig?.[1]) manifest = null;
    } catch {
      manifest = null;
    }
  }
  const rel = path.slice(ROOT.length);
  const key = manifest?.files[rel];
  if (!key) return undefined;
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st || st.mtimeMs !== key[0] || st.size !== key[1]) return undefined;
  try {
    return readFileSync(join(CACHE, `${rel}.js`), "utf8");
  } catch {
    return undefined;
  }
}

let esbuild;
let tsconfigRaw;
async function compile(path) {
  esbuild ??= await import("esbuild");
  if (tsconfigRaw === undefined) {
    try {
      tsconfigRaw = JSON.parse(readFileSync(join(ROOT, "tsconfig.json"), "utf8"));
    } catch {
      tsconfigRaw = {};
    }
  }
  const { code } = await esbuild.transform(readFileSync(path, "utf8"), {
    loader: path.endsWith(".tsx") ? "tsx" : "ts",
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "inline",
    sourcesContent: false,
    sourcefile: path,
    tsconfigRaw,
  });
  return code;
}

export async function load(url, context, nextLoad) {
  if (url.startsWith("file:")) {
    const path = fileURLToPath(url);
    if (SOURCE.test(path)) return { format: "module", source: cached(path) ?? (await compile(path)), shortCircuit: true };
  }
  return nextLoad(url, context);
}
