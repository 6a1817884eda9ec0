// The tests' TypeScript loader, in place of tsx: `node --import ./scripts/test-loader.mjs file.ts`.
// Its hooks (scripts/test-loader-hooks.mjs) serve each .ts module from the compiled cache that
// scripts/test-compile.mjs keeps (the test runner brings it up to date at the start of a run),
// under the module's own URL; stack traces are mapped back to the .ts lines.
import { register } from "node:module";

process.setSourceMapsEnabled(true);
register("./test-loader-hooks.mjs", import.meta.url);
