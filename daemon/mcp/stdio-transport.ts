import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { ReadBuffer, serializeMessage } from "@modelcontextprotocol/sdk/shared/stdio.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import type { SpawnedServer, SpawnProcess } from "./spawn-server.js";

/** Bytes of stderr kept for "failed to start" messages. */
const STDERR_TAIL = 4_096;
/** The largest single message a server may send (a bigger one closes the connection with a clear error). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/**
 * The SDK's stdio client transport, written over an injected process starter so the server runs
 * in the daemon's process discipline (own group, killed with a grace period) and its stderr is
 * kept: the framing is the SDK's own (`ReadBuffer`, `serializeMessage`).
 */
export class ProcessStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;
  #server: SpawnedServer | null = null;
  readonly #buffer = new ReadBuffer({ maxBufferSize: MAX_MESSAGE_BYTES });
  #stderr = "";
  #closed = false;
  #ended = false;
  /** Why the connection ended, when the server (not we) ended it. */
  exitReason: string | null = null;

  constructor(
    private readonly params: { command: string; args: string[]; env: NodeJS.ProcessEnv; cwd?: string; name: string },
    private readonly spawnProcess: SpawnProcess,
  ) {}

  get pid(): number | null {
    return this.#server?.child.pid ?? null;
  }

  /** The last lines the server wrote to stderr. */
  stderrTail(): string {
    return this.#stderr.trim();
  }

  start(): Promise<void> {
    if (this.#server) throw new Error("transport already started");
    return new Promise((resolve, reject) => {
      const server = this.spawnProcess(this.params.command, this.params.args, { env: this.params.env, cwd: this.params.cwd, name: this.params.name });
      this.#server = server;
      const { child } = server;
      child.once("error", (error) => {
        this.exitReason = `could not start ${this.params.command}: ${error.message}`;
        reject(new Error(this.exitReason));
        this.onerror?.(error);
        this.#finish();
      });
      child.once("spawn", () => resolve());
      child.once("exit", (code, signal) => {
        if (!this.#closed) this.exitReason ??= `the server exited (${signal ? `signal ${signal}` : `code ${code}`})`;
      });
      child.once("close", () => this.#finish());
      child.stdin?.on("error", (error) => this.onerror?.(error));
      child.stderr?.on("data", (d: Buffer) => {
        this.#stderr = (this.#stderr + d.toString("utf8")).slice(-STDERR_TAIL);
      });
      child.stdout?.on("data", (chunk: Buffer) => {
        try {
          this.#buffer.append(chunk);
        } catch {
          this.exitReason = `the server sent a message larger than ${MAX_MESSAGE_BYTES / 1024 / 1024} MB`;
          this.onerror?.(new Error(this.exitReason));
          void this.close();
          return;
        }
        for (;;) {
          let message: JSONRPCMessage | null;
          try {
            message = this.#buffer.readMessage();
          } catch (error) {
            // A line that is not JSON-RPC (a server printing to stdout): reported, skipped.
            this.onerror?.(new Error(`the server wrote something that is not JSON-RPC to stdout: ${(error as Error).message.slice(0, 200)}`));
            continue;
          }
          if (message === null) break;
          this.onmessage?.(message);
        }
      });
    });
  }

  /** Once: the connection is over (the server exited, or we closed it). */
  #finish(): void {
    this.#server = null;
    this.#buffer.clear();
    if (this.#ended) return;
    this.#ended = true;
    this.onclose?.();
  }

  async close(): Promise<void> {
    const server = this.#server;
    this.#closed = true;
    if (server) {
      try {
        server.child.stdin?.end();
      } catch {
        // gone
      }
      await server.kill();
    }
    this.#finish();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve, reject) => {
      const stdin = this.#server?.child.stdin;
      if (!stdin || stdin.destroyed) {
        reject(new Error("not connected"));
        return;
      }
      if (stdin.write(serializeMessage(message))) resolve();
      else stdin.once("drain", resolve);
    });
  }
}
