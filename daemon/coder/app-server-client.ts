import type { ChildProcess } from "node:child_process";
import { AgentError } from "../../shared/errors.js";
import { spawnGroup, type ProcessGroup } from "../process/process-group.js";

/**
 * The client side of `codex app-server`: newline-delimited JSON-RPC on stdio. codex omits the
 * `"jsonrpc"` field, so this reads lines, never Content-Length frames. Requests it sends wait for
 * their answer; requests the server sends go to `onRequest` (unknown ones answer -32601);
 * notifications go to `onNotification`. `lastHeard` is when any line last arrived (the silence
 * watchdog reads it).
 */
export type ServerRequestHandler = (method: string, params: any) => Promise<unknown>;
export type NotificationHandler = (method: string, params: any) => void;

export const METHOD_NOT_FOUND = -32601;

/** A server request no handler knows: answered with JSON-RPC -32601. */
export class UnknownServerRequest extends Error {}

export interface AppServerSpawn {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  cwd: string;
}

export class AppServerClient {
  readonly #child: ChildProcess;
  readonly #group: ProcessGroup | null;
  readonly #pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void; method: string }>();
  #nextId = 1;
  #buffer = "";
  #stderr = "";
  #exited: { code: number | null; signal: string | null } | null = null;
  readonly #exitWaiters: Array<() => void> = [];
  onRequest: ServerRequestHandler = async (method) => {
    throw new UnknownServerRequest(method);
  };
  onNotification: NotificationHandler = () => undefined;
  /** Called once when the process goes away (or its stdout closes). */
  onExit: (() => void) | null = null;
  lastHeard: number;

  constructor(
    spawnWith: AppServerSpawn,
    private readonly now: () => number,
  ) {
    this.lastHeard = now();
    const { child, group } = spawnGroup(spawnWith.command, spawnWith.args, {
      cwd: spawnWith.cwd,
      env: spawnWith.env,
      stdio: ["pipe", "pipe", "pipe"],
      label: `${spawnWith.command} ${spawnWith.args.join(" ")}`,
    });
    this.#child = child;
    this.#group = group;
    child.stdout!.setEncoding("utf8");
    child.stdout!.on("data", (chunk: string) => this.#read(chunk));
    child.stderr!.setEncoding("utf8");
    child.stderr!.on("data", (chunk: string) => {
      this.#stderr = (this.#stderr + chunk).slice(-4000);
    });
    child.stdin!.on("error", () => undefined);
    child.on("error", (error) => this.#gone({ code: null, signal: null }, error.message));
    child.on("exit", (code, signal) => this.#gone({ code, signal }));
  }

  get alive(): boolean {
    return this.#exited === null;
  }

  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** The last few KB the server wrote on stderr (for an error message). */
  get stderrTail(): string {
    return this.#stderr;
  }

  request<T = any>(method: string, params: unknown): Promise<T> {
    if (this.#exited) return Promise.reject(this.#deadError(method));
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.#write({ id, method, params });
    });
  }

  notify(method: string, params?: unknown): void {
    this.#write(params === undefined ? { method } : { method, params });
  }

  /** Stops the process group (SIGTERM, then SIGKILL after the grace). Resolves once it exited. */
  async stop(): Promise<void> {
    if (this.#exited) return;
    const exited = new Promise<void>((resolve) => this.#exitWaiters.push(resolve));
    this.#child.stdin?.end();
    if (this.#group) this.#group.stop(1000);
    else this.#child.kill("SIGKILL");
    await exited;
  }

  #write(message: Record<string, unknown>): void {
    if (this.#exited || !this.#child.stdin?.writable) return;
    this.#child.stdin.write(`${JSON.stringify(message)}\n`);
  }

  #read(chunk: string): void {
    this.lastHeard = this.now();
    this.#buffer += chunk;
    for (let nl = this.#buffer.indexOf("\n"); nl >= 0; nl = this.#buffer.indexOf("\n")) {
      const line = this.#buffer.slice(0, nl).trim();
      this.#buffer = this.#buffer.slice(nl + 1);
      if (line) this.#dispatch(line);
    }
  }

  #dispatch(line: string): void {
    let message: any;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not protocol (a stray print): ignored
    }
    if (!message || typeof message !== "object") return;
    const hasId = typeof message.id === "number" || typeof message.id === "string";
    if (typeof message.method === "string" && hasId) {
      void this.#answer(message.id, message.method, message.params);
    } else if (typeof message.method === "string") {
      try {
        this.onNotification(message.method, message.params);
      } catch {
        // a handler's failure is not the server's
      }
    } else if (hasId) {
      const waiting = this.#pending.get(Number(message.id));
      if (!waiting) return;
      this.#pending.delete(Number(message.id));
      if (message.error)
        waiting.reject(new AgentError("coder.request_failed", `${waiting.method}: ${message.error.message ?? "error"} (${message.error.code})`));
      else waiting.resolve(message.result);
    }
  }

  async #answer(id: number | string, method: string, params: unknown): Promise<void> {
    try {
      const result = await this.onRequest(method, params);
      this.#write({ id, result });
    } catch (error) {
      if (error instanceof UnknownServerRequest) this.#write({ id, error: { code: METHOD_NOT_FOUND, message: `method not found: ${method}` } });
      else this.#write({ id, error: { code: -32603, message: (error as Error).message } });
    }
  }

  #deadError(method: string): AgentError {
    const how = this.#exited?.signal ? `was killed by ${this.#exited.signal}` : `exited with code ${this.#exited?.code ?? "?"}`;
    const tail = this.#stderr.trim().split("\n").slice(-3).join(" | ");
    return new AgentError("coder.server_died", `the coder app-server ${how} (during ${method})${tail ? `: ${tail}` : ""}`);
  }

  #gone(how: { code: number | null; signal: string | null }, why?: string): void {
    if (this.#exited) return;
    this.#exited = how;
    if (why) this.#stderr += `\n${why}`;
    for (const [id, waiting] of this.#pending) {
      this.#pending.delete(id);
      waiting.reject(this.#deadError(waiting.method));
    }
    // Whatever the leader left in its group goes with it (a command it was running).
    this.#group?.forget({ killLeftovers: true });
    for (const w of this.#exitWaiters.splice(0)) w();
    this.onExit?.();
  }
}
