import { existsSync } from "node:fs";
import { stat } from "node:fs/promises";
import { z } from "zod";
import { ToolFailure } from "../../../shared/errors.js";
import { spawnGroup } from "../../process/process-group.js";
import { defineTool, resolvePath, TOOL_OUTPUT_MAX } from "./registry.js";

const SHELL = "/bin/sh";
export const TERMINAL_DEFAULTS = Object.freeze({
  timeoutS: 180,
  maxTimeoutS: 3_600,
  maxOutput: TOOL_OUTPUT_MAX,
  /** After the shell exits, how long background children may keep its output pipes open. */
  drainMs: 500,
});

/** Keeps the first and last bytes of a stream within a budget, counting what fell in between. */
class CappedCapture {
  readonly #headCap: number;
  readonly #tailCap: number;
  #head: Buffer[] = [];
  #headLen = 0;
  #tail: Buffer[] = [];
  #tailLen = 0;
  total = 0;

  constructor(max: number) {
    this.#headCap = Math.ceil(max / 2);
    this.#tailCap = Math.floor(max / 2);
  }

  push(chunk: Buffer): void {
    this.total += chunk.length;
    if (this.#headLen < this.#headCap) {
      const take = chunk.subarray(0, this.#headCap - this.#headLen);
      this.#head.push(take);
      this.#headLen += take.length;
      chunk = chunk.subarray(take.length);
    }
    if (chunk.length === 0 || this.#tailCap === 0) return;
    this.#tail.push(chunk);
    this.#tailLen += chunk.length;
    while (this.#tail.length > 1 && this.#tailLen - this.#tail[0]!.length >= this.#tailCap) this.#tailLen -= this.#tail.shift()!.length;
  }

  result(): { head: Uint8Array; tail: Uint8Array; omittedBytes: number } {
    const head = Buffer.concat(this.#head);
    const tailAll = Buffer.concat(this.#tail);
    const tail = tailAll.subarray(Math.max(0, tailAll.length - this.#tailCap));
    return { head, tail, omittedBytes: this.total - head.length - tail.length };
  }
}

export const terminalTool = defineTool({
  name: "terminal",
  toolset: "terminal",
  description:
    "Run a shell command (/bin/sh -c) and return its combined stdout and stderr and exit code. No stdin. The command and everything it starts are killed when the timeout passes. Long output keeps its beginning and end.",
  args: z.object({
    command: z.string().min(1, "command must not be empty").describe("Shell command line to run"),
    cwd: z.string().optional().describe("Working directory (default: the session's)"),
    timeout: z
      .number()
      .positive()
      .max(TERMINAL_DEFAULTS.maxTimeoutS)
      .optional()
      .describe(`Seconds before the command is killed (default ${TERMINAL_DEFAULTS.timeoutS})`),
    max_output: z.number().int().min(100).max(1_000_000).optional().describe(`Maximum bytes of output returned (default ${TERMINAL_DEFAULTS.maxOutput})`),
  }),
  available: () => existsSync(SHELL),
  approval: (args, ctx) => {
    const cwd = resolvePath(args.cwd || ".", ctx);
    return { kind: "command", tool: "terminal", summary: args.command, details: { command: args.command, cwd } };
  },
  async run(args, ctx, deps) {
    const cwd = resolvePath(args.cwd || ".", ctx);
    const info = await stat(cwd).catch(() => null);
    if (!info?.isDirectory()) throw new ToolFailure("bad_cwd", `working directory does not exist or is not a directory: ${cwd}`);
    const timeoutMs = (args.timeout ?? TERMINAL_DEFAULTS.timeoutS) * 1000;
    const capture = new CappedCapture(args.max_output ?? TERMINAL_DEFAULTS.maxOutput);
    const started = Date.now();

    // Its own process group (so a timeout stops its children too), recorded before anything
    // else runs: a daemon killed now leaves a record, and the next start stops what is left of
    // the group (daemon/process/).
    const { child, group } = spawnGroup(SHELL, ["-c", args.command], { cwd, env: ctx.env, label: args.command });
    child.stdout!.on("data", (d: Buffer) => capture.push(d));
    child.stderr!.on("data", (d: Buffer) => capture.push(d));

    let stoppedBy: "timeout" | "interrupt" | null = null;
    const stop = (why: "timeout" | "interrupt") => {
      if (stoppedBy || !group) return;
      stoppedBy = why;
      group.stop();
    };
    const timer = setTimeout(() => stop("timeout"), timeoutMs);
    const onAbort = () => stop("interrupt");
    ctx.signal?.addEventListener("abort", onAbort, { once: true });

    const exit = await new Promise<{ code: number | null; signal: NodeJS.Signals | null; spawnError?: Error }>((resolve) => {
      child.once("error", (error) => resolve({ code: null, signal: null, spawnError: error }));
      child.once("exit", (code, signal) => {
        // Background children may hold the pipes open; give them a moment, then stop reading.
        const drain = setTimeout(() => {
          child.stdout!.destroy();
          child.stderr!.destroy();
          resolve({ code, signal });
        }, TERMINAL_DEFAULTS.drainMs);
        child.once("close", () => {
          clearTimeout(drain);
          resolve({ code, signal });
        });
      });
    });
    clearTimeout(timer);
    ctx.signal?.removeEventListener("abort", onAbort);
    // Whatever the shell left running in a stopped group goes with it once the shell is over.
    group?.forget({ killLeftovers: stoppedBy !== null });
    if (exit.spawnError) throw new ToolFailure("spawn_failed", `could not start the command: ${exit.spawnError.message}`);

    const captured = capture.result();
    const { output } = await deps.runTask({ kind: "format_output", ...captured });
    const result: Record<string, unknown> = { exit_code: exit.code, output, duration_ms: Date.now() - started };
    if (exit.signal) result.signal = exit.signal;
    if (captured.omittedBytes > 0) result.truncated_bytes = captured.omittedBytes;
    if (stoppedBy === "timeout") result.timed_out = true;
    if (stoppedBy === "interrupt") result.interrupted = true;
    if (stoppedBy)
      result.note =
        stoppedBy === "timeout" ? `the command was killed after ${timeoutMs / 1000} s (timeout)` : "the command was killed because the turn was interrupted";
    return { ok: exit.code === 0 && !stoppedBy, output: result };
  },
});
