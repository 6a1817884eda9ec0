/**
 * The node arguments that run a TypeScript file in a child process the way the suite runs its
 * test files: through the suite's own loader (scripts/test-loader.mjs, served from the cache
 * scripts/run-tests.mjs compiles at the start of a run), not tsx, whose start-up costs about
 * 0.2 s more CPU per process. `spawn(process.execPath, [...TS_LOADER, "fixture.ts", ...args])`.
 */
export const TS_LOADER: readonly string[] = ["--import", new URL("../../scripts/test-loader.mjs", import.meta.url).href];
