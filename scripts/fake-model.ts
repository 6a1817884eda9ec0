#!/usr/bin/env -S npx tsx
/**
 * Run the fake model server by hand or from a benchmark:
 *   npx tsx scripts/fake-model.ts [--port N] [--script file.json] [--loop] [--text "hello"]
 * A script file is a JSON array of responses (see test/fixtures/fake-model-server.ts).
 * Without a script every request gets `--text` (default "ok"). `--save-request N:file` writes the
 * body of the first request with at least N messages to `file` (benchmarks replay it as their
 * baseline). Prints `{"url", "baseUrl"}`
 * as one JSON line once listening; Ctrl-C stops it.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { startFakeModel, type Scripted } from "../test/fixtures/fake-model-server.js";

const { values } = parseArgs({
  options: {
    port: { type: "string" },
    script: { type: "string" },
    loop: { type: "boolean" },
    text: { type: "string" },
    quiet: { type: "boolean" },
    "save-request": { type: "string" },
  },
});
const script: Scripted[] = values.script ? JSON.parse(readFileSync(values.script, "utf8")) : [];
const text = values.text ?? "ok";
const [saveAt, saveFile] = values["save-request"]
  ? [Number(values["save-request"].split(":")[0]), values["save-request"].split(":").slice(1).join(":")]
  : [Infinity, ""];
let saved = false;
const fake = await startFakeModel({
  script,
  loop: Boolean(values.loop),
  port: values.port ? Number(values.port) : 0,
  record: false,
  onRequest: (body) => {
    if (saved || !Array.isArray(body?.messages) || body.messages.length < saveAt) return;
    saved = true;
    writeFileSync(saveFile, JSON.stringify(body));
  },
  respond: () => ({ text }),
});
process.stdout.write(JSON.stringify({ url: fake.url, baseUrl: fake.baseUrl }) + "\n");
const stop = () => void fake.close().then(() => process.exit(0));
process.on("SIGINT", stop);
process.on("SIGTERM", stop);
