/**
 * The worker-output relay's process (started by shared/log-relay.ts): `relay-main.js <log path> <max bytes> <keep>`,
 * the secrets as a JSON array on fd 3, the worker's output on stdin.
 *
 * Output is written a line at a time; a line still being written (a model's answer streamed a
 * piece at a time) is written after a short pause, except its tail that could be the start of a
 * secret, which waits for the rest.
 */
import { readFileSync } from "node:fs";
import { StringDecoder } from "node:string_decoder";
import { LogFile } from "./log-file.js";
import { Redactor } from "./redact.js";

const [path, maxBytesArg, keepArg] = process.argv.slice(2);
const maxBytes = Number(maxBytesArg);
const keep = Number(keepArg);
if (!path || !Number.isInteger(maxBytes) || maxBytes <= 0 || !Number.isInteger(keep) || keep < 0) {
  process.stderr.write("usage: relay-main.js <log path> <max bytes> <keep>\n");
  process.exit(2);
}

/** How long a line still being written waits before what is safe of it is written. */
const IDLE_MS = 150;
/** A line longer than this is written in pieces (what is safe of it). */
const MAX_PENDING = 64 * 1024;
/** Past MAX_PENDING, at most this much of a line that names a credential (`token`…) is held back. */
const MAX_CONTEXT_HOLD = 4 * 1024;

for (const signal of ["SIGTERM", "SIGINT", "SIGHUP"] as const) process.on(signal, () => undefined);

const redactor = new Redactor();
let secrets: unknown = [];
try {
  secrets = JSON.parse(readFileSync(3, "utf8") || "[]");
} catch {}
redactor.setSecrets("daemon", Array.isArray(secrets) ? secrets.filter((s): s is string => typeof s === "string") : []);

const file = new LogFile(path, { maxBytes, keep, redactor });
const decoder = new StringDecoder("utf8");
let pending = "";
let timer: NodeJS.Timeout | null = null;

function write(text: string): void {
  if (!text) return;
  try {
    file.append(text);
  } catch {
    // A full disk: the output is lost, the worker goes on (it must not block on a full pipe).
  }
}

/** Write the complete lines; with `partial`, also what is safe of the line still being written. */
function flush(partial: boolean): void {
  const end = pending.lastIndexOf("\n") + 1;
  if (end > 0) {
    write(pending.slice(0, end));
    pending = pending.slice(end);
  }
  if (partial && pending) {
    const cut = redactor.safeCut(pending, pending.length > MAX_PENDING ? MAX_CONTEXT_HOLD : undefined);
    write(pending.slice(0, cut));
    pending = pending.slice(cut);
  }
}

process.stdin.on("data", (chunk: Buffer) => {
  pending += decoder.write(chunk);
  flush(pending.length > MAX_PENDING);
  if (timer) clearTimeout(timer);
  timer = pending ? setTimeout(() => flush(true), IDLE_MS) : null;
});
let finished = false;
/** The end of the worker's output (the pipe closed, or a read error): write what is left. */
function finish(): void {
  if (finished) return;
  finished = true;
  if (timer) clearTimeout(timer);
  pending += decoder.end();
  write(pending);
  pending = "";
}
process.stdin.on("end", finish);
process.stdin.on("error", finish);
