#!/usr/bin/env node
// The `agent` executable: the command line (cli/command-line.ts) run once, its exit code the process's.
import { runCommandLine } from "./command-line.js";

void runCommandLine(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
