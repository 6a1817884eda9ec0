#!/usr/bin/env -S npx tsx
/**
 * Run the fake model server by hand or from a benchmark:
 *   npx tsx scripts/fake-model.ts [--port N] [--script file.json] [--loop] [--text "hello"]
 * A script file is a JSON array of responses (see test/fixtures/fake-model-server.ts).
 * Without a script every request gets `--text` (default "ok"). Prints `{"url", "baseUrl"}`
 * as one JSON line once listening; Ctrl-C stops it.
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startFakeModel, type Scripted } from "../test/fixtures/fake-model-server.js";

const { values } = parseArgs({
  options: { port: { type: "string" }, script: { type: "string" }, loop: { type: "boolean" }, text: { type: "string" }, quiet: { type: "boolean" } },
});
const script: Scripted[] = values.script ? JSON.parse(readFileSync(values.script, "utf8")) : [];
const text = values.text ?? "ok";
const fake = await startFakeModel({
  script,
  loop: Boolean(values.loop),
  port: values.port ? Number(values.port) : 0,
  record: false,
  respond: () => ({ text }),
});
process.stdout.write(JSON.stringify({ url: fake.url, baseUrl: fake.baseUrl }) + "\n");
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
