/**
 * Where a thread's script is (a `node:worker_threads` Worker): the compiled JavaScript next to the module that starts it
 * (`dist/…`), or, when that module runs from source (tests under tsx), the build's copy of it.
 * A thread runs compiled code either way, so it starts without a TypeScript loader.
 */
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const SOURCE_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..");

/** The script `name` (e.g. `pool-thread.js`) next to the module whose `import.meta.url` is `moduleUrl`. */
export function threadScript(moduleUrl: string, name: string): string {
  const here = fileURLToPath(moduleUrl);
  if (here.endsWith(".js")) return join(dirname(here), name);
  return join(SOURCE_ROOT, "dist", relative(SOURCE_ROOT, dirname(here)), name);
}
