/**
 * The CLI host: runs `agent` calls in worker threads of the test process, each thread loading
 * the built command line (dist/cli/command-line.js, the code the `agent` executable runs) once
 * and then taking calls one at a time. A call in a process costs about 0.11 s of CPU, almost all
 * of it Node starting and loading the CLI; the suite makes thousands of calls. What a call sees
 * is what its process would: its own environment (HOME too), an empty or given stdin that is
 * not a terminal, stdout and stderr captured, its exit code. And what a process would show, the
 * host shows too: a command that leaves something keeping the event loop alive (a socket, a
 * timer) would never exit as a process, so such a call fails here, naming what it left.
 *
 * `TEST_CLI=process` runs every call as a process instead (test/foundation/cli-host.test.ts
 * checks that both give the same results).
 */
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";

export interface HostResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface Reply {
  id?: number;
  ready?: boolean;
  code?: number;
  stdout?: string;
  stderr?: string;
  left?: string[];
  exited?: boolean;
}

interface Call {
  id: number;
  args: string[];
  settle: (error: Error | null, result?: HostResult) => void;
}

/** How long a command's leftovers (a closing socket, a child's pipe) may take to go. */
const DRAIN_MS = 5000;
/** Threads at most; more calls at once wait for one. */
const MAX_THREADS = 6;

class HostThread {
  readonly worker: Worker;
  ready: Promise<void>;
  call: Call | null = null;
  dead = false;

  constructor(
    readonly commandLine: string,
    private readonly onGone: (t: HostThread) => void,
  ) {
    // execArgv empty: the thread, and what it starts through process.execArgv, run as the
    // `agent` executable would, without the test process's loader.
    this.worker = new Worker(new URL("./cli-host-worker.mjs", import.meta.url), { workerData: { commandLine, drainMs: DRAIN_MS }, execArgv: [] });
    this.ready = new Promise((resolve, reject) => {
      this.worker.once("message", (m: Reply) => (m.ready ? resolve() : reject(new Error("the CLI host did not start"))));
      this.worker.once("error", reject);
    });
    this.worker.on("message", (m: Reply) => this.reply(m));
    // An uncaught exception ends the thread: a process would have printed it and exited 1. Its
    // "error" comes before "exit"; so does the message of a process.exit (which Node's own
    // handling of the exception may call too): the call ends at "exit", with all of them.
    this.worker.on("error", (e) => (this.uncaught = `${e?.stack ?? e}\n`));
    this.worker.on("exit", (code) => this.end(code));
    // After the listeners: adding a "message" listener refs the thread's port again. An idle
    // host thread must not keep the test process alive.
    this.worker.unref();
  }

  private exited: HostResult | null = null;
  private uncaught = "";

  private reply(m: Reply): void {
    const call = this.call;
    if (m.ready || !call || m.id !== call.id) return;
    const result = { code: m.code ?? null, stdout: m.stdout ?? "", stderr: m.stderr ?? "" };
    if (m.exited) {
      this.exited = result;
      return;
    }
    this.call = null;
    if (m.left && m.left.length > 0) {
      // What the command left may still run: the thread is not reused.
      this.gone();
      void this.worker.terminate();
      call.settle(
        new Error(
          `agent ${call.args.join(" ")} left ${m.left.join(", ")} keeping its event loop alive ${DRAIN_MS} ms after it finished: as a process it would not have exited\nstdout: ${result.stdout}\nstderr: ${result.stderr}`,
        ),
      );
    } else call.settle(null, result);
  }

  private end(code: number): void {
    const call = this.call;
    this.call = null;
    this.gone();
    if (!call) return;
    const result = this.exited ?? { code, stdout: "", stderr: "" };
    if (this.uncaught) call.settle(null, { ...result, code: 1, stderr: result.stderr + this.uncaught });
    else call.settle(null, result);
  }

  private gone(): void {
    if (this.dead) return;
    this.dead = true;
    this.onGone(this);
  }
}

const threads: HostThread[] = [];
const waiting: Array<() => void> = [];
let nextId = 1;

function commandLineUrl(root: string): string {
  return pathToFileURL(join(root, "dist", "cli", "command-line.js")).href;
}

function release(t: HostThread): void {
  const i = threads.indexOf(t);
  if (i >= 0) threads.splice(i, 1);
  waiting.shift()?.();
}

async function idleThread(root: string): Promise<HostThread> {
  const url = commandLineUrl(root);
  for (;;) {
    const idle = threads.find((t) => !t.call && !t.dead && t.commandLine === url);
    if (idle) return idle;
    // A thread of another build that is idle makes room.
    const other = threads.find((t) => !t.call && !t.dead && t.commandLine !== url);
    if (other && threads.length >= MAX_THREADS) {
      release(other);
      other.dead = true;
      void other.worker.terminate();
    }
    if (threads.length < MAX_THREADS) {
      const t = new HostThread(url, release);
      threads.push(t);
      return t;
    }
    await new Promise<void>((resolve) => waiting.push(resolve));
  }
}

/** Run `agent <args>` in a host thread with this environment (undefined values unset it). */
export async function hostCall(root: string, args: string[], env: NodeJS.ProcessEnv, input: string | undefined, timeoutMs: number): Promise<HostResult> {
  const thread = await idleThread(root);
  const id = nextId++;
  const clean: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) clean[k] = v;
  return new Promise<HostResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      thread.call = null;
      void thread.worker.terminate();
      reject(new Error(`agent ${args.join(" ")} timed out (CLI host)`));
    }, timeoutMs);
    thread.call = {
      id,
      args,
      settle: (error, result) => {
        clearTimeout(timer);
        if (!thread.dead) waiting.shift()?.();
        if (error) reject(error);
        else resolve(result!);
      },
    };
    thread.ready.then(
      () => thread.worker.postMessage({ id, args, env: clean, input }),
      (e: Error) => thread.call?.settle(e),
    );
  });
}
