// The CLI host's worker thread (test/helpers/cli-host.ts): loads the built command line once
// and runs calls one at a time, each with its own environment, stdin, stdout and stderr, as
// separate `agent` processes would have. Plain JavaScript: it runs without the suite's loader.
import { Buffer } from "node:buffer";
import cp from "node:child_process";
import fs from "node:fs";
import { syncBuiltinESMExports } from "node:module";
import os from "node:os";
import { Readable, Writable } from "node:stream";
import { parentPort, workerData } from "node:worker_threads";

// os.homedir() asks libuv, which reads the process's real HOME, not this thread's copy of the
// environment: a call that sets HOME must see its own, as its process would.
const realHomedir = os.homedir;
os.homedir = () => process.env.HOME || realHomedir();

// A child given this thread's stdio ("inherit", or 0/1/2) would get the test process's file
// descriptors: give it pipes instead, joined to the call's stdin, stdout and stderr.
function inheritThroughPipes(run) {
  return (file, args, options) => {
    if (!Array.isArray(args)) [args, options] = [[], args];
    const given = options?.stdio;
    const slots = typeof given === "string" ? [given, given, given] : Array.isArray(given) ? [...given] : null;
    const inherited = slots ? [0, 1, 2].map((i) => slots[i] === "inherit" || slots[i] === i) : [false, false, false];
    if (!inherited.some(Boolean)) return run(file, args, options);
    for (const i of [0, 1, 2]) if (inherited[i]) slots[i] = "pipe";
    const child = run(file, args, { ...options, stdio: slots });
    const out = process.stdout;
    const err = process.stderr;
    if (inherited[1]) child.stdout.on("data", (d) => out.write(d));
    if (inherited[2]) child.stderr.on("data", (d) => err.write(d));
    if (inherited[0]) {
      child.stdin.on("error", () => {});
      process.stdin.pipe(child.stdin);
    }
    return child;
  };
}
// `readFileSync(0)` reads file descriptor 0, the test process's stdin: give the call's input.
let callInput = Buffer.alloc(0);
const realReadFileSync = fs.readFileSync;
fs.readFileSync = (path, options) => {
  if (path !== 0 && path !== "/dev/stdin") return realReadFileSync(path, options);
  const encoding = typeof options === "string" ? options : options?.encoding;
  return encoding ? callInput.toString(encoding) : Buffer.from(callInput);
};
cp.spawn = inheritThroughPipes(cp.spawn);
cp.fork = inheritThroughPipes(cp.fork);
syncBuiltinESMExports();

const { runCommandLine } = await import(workerData.commandLine);

const realExit = process.exit.bind(process);
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"];
const DRAIN_MS = workerData.drainMs ?? 5000;

/** A stream that keeps what is written, as a pipe to the test would. */
function sink(chunks) {
  return new Writable({
    decodeStrings: false,
    write(chunk, encoding, done) {
      chunks.push(typeof chunk === "string" ? Buffer.from(chunk, encoding) : Buffer.from(chunk));
      done();
    },
  });
}

function setStdio(name, stream) {
  Object.defineProperty(process, name, { configurable: true, enumerable: true, get: () => stream });
}

/** The resource types keeping this thread's event loop alive, counted. */
function resources() {
  const count = new Map();
  for (const r of process.getActiveResourcesInfo()) count.set(r, (count.get(r) ?? 0) + 1);
  return count;
}

/** What is alive now that was not before the call (a real process would still be running). */
function extra(before) {
  const out = [];
  for (const [r, n] of resources()) if (n > (before.get(r) ?? 0)) out.push(`${r} x${n - (before.get(r) ?? 0)}`);
  return out;
}

parentPort.on("message", async ({ id, args, env, input }) => {
  for (const k of Object.keys(process.env)) delete process.env[k];
  Object.assign(process.env, env);
  const out = [];
  const err = [];
  setStdio("stdout", sink(out));
  setStdio("stderr", sink(err));
  callInput = input === undefined ? Buffer.alloc(0) : Buffer.from(input);
  setStdio("stdin", Readable.from(input === undefined ? [] : [callInput]));
  const listeners = new Map(SIGNALS.map((s) => [s, new Set(process.listeners(s))]));
  // process.exit ends this thread (the host sees the code): send what was written first.
  process.exit = (c) => {
    parentPort.postMessage({
      id,
      code: c ?? process.exitCode ?? 0,
      stdout: Buffer.concat(out).toString(),
      stderr: Buffer.concat(err).toString(),
      left: [],
      exited: true,
    });
    realExit(c);
  };
  const before = resources();
  let code;
  try {
    code = await runCommandLine(args);
  } catch (e) {
    // runCommandLine prints and maps every error; reaching here is a bug the process would show
    // as an uncaught exception (exit 1, the stack on stderr).
    err.push(Buffer.from(`${e?.stack ?? e}\n`));
    code = 1;
  }
  // A process exits once nothing keeps its event loop alive: wait for the same here, and name
  // what is still alive after DRAIN_MS (the process would not have exited).
  const started = Date.now();
  let left = extra(before);
  while (left.length > 0 && Date.now() - started < DRAIN_MS) {
    await new Promise((r) => setTimeout(r, 5).unref());
    left = extra(before);
  }
  for (const s of SIGNALS) for (const l of process.listeners(s)) if (!listeners.get(s).has(l)) process.removeListener(s, l);
  parentPort.postMessage({ id, code, stdout: Buffer.concat(out).toString(), stderr: Buffer.concat(err).toString(), left });
});
parentPort.postMessage({ ready: true });
