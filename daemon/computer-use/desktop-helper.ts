/**
 * The project's own accessibility and screenshot helper (cua-helper.py), run with the system
 * Python as one long-lived process per display, JSON lines over stdio. Each request has a
 * deadline: a display or bus that stops answering fails the call, never hangs a turn.
 */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ToolFailure } from "../../shared/errors.js";
import { spawnGroup, type ProcessGroup } from "../process/process-group.js";
import type { ChildProcess } from "node:child_process";

/** The system Python: python3-pyatspi and python3-gi are installed for it, not for a pyenv or venv one. */
export const SYSTEM_PYTHON = "/usr/bin/python3";

/** cua-helper.py in the source tree: next to this module from source, or found from dist/ (tsc copies no .py). */
export function helperScript(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [join(here, "cua-helper.py"), join(here, "..", "..", "..", "daemon", "computer-use", "cua-helper.py")];
  return candidates.find((p) => existsSync(p)) ?? candidates[0]!;
}

interface Pending {
  resolve(value: Record<string, unknown>): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class DesktopHelper {
  #child: ChildProcess | null = null;
  #group: ProcessGroup | null = null;
  #nextId = 1;
  #pending = new Map<number, Pending>();
  #buffer = "";
  #stderr = "";
  #ready: Promise<void> | null = null;
  #closed = false;

  constructor(private readonly env: NodeJS.ProcessEnv) {}

  get pid(): number | undefined {
    return this.#child?.pid;
  }

  start(timeoutMs = 10_000): Promise<void> {
    if (this.#ready) return this.#ready;
    this.#ready = new Promise<void>((resolve, reject) => {
      const { child, group } = spawnGroup(SYSTEM_PYTHON, [helperScript()], {
        env: { ...this.env, NO_AT_BRIDGE: "1", PYTHONDONTWRITEBYTECODE: "1" },
        stdio: ["pipe", "pipe", "pipe"],
        label: "computer_use helper",
      });
      this.#child = child;
      this.#group = group;
      const timer = setTimeout(() => reject(new ToolFailure("driver_unavailable", `the computer_use helper did not start within ${timeoutMs} ms`)), timeoutMs);
      const first: Pending = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
        timer,
      };
      this.#pending.set(0, first);
      child.on("error", (error) => this.#fail(new ToolFailure("driver_unavailable", `${SYSTEM_PYTHON} could not be started: ${error.message}`)));
      child.stdout!.setEncoding("utf8");
      child.stdout!.on("data", (chunk: string) => this.#onData(chunk));
      child.stderr!.setEncoding("utf8");
      child.stderr!.on("data", (chunk: string) => {
        this.#stderr = (this.#stderr + chunk).slice(-2_000);
      });
      child.on("exit", (code) => {
        this.#group?.forget();
        this.#fail(
          new ToolFailure(
            "driver_unavailable",
            `the computer_use helper ended (exit ${code})${this.#stderr ? `: ${this.#stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`,
          ),
        );
      });
    });
    return this.#ready;
  }

  #onData(chunk: string): void {
    this.#buffer += chunk;
    for (let nl = this.#buffer.indexOf("\n"); nl >= 0; nl = this.#buffer.indexOf("\n")) {
      const line = this.#buffer.slice(0, nl);
      this.#buffer = this.#buffer.slice(nl + 1);
      let msg: Record<string, unknown>;
      try {
        msg = JSON.parse(line);
      } catch {
        continue;
      }
      const id = typeof msg.id === "number" ? msg.id : -1;
      const pending = this.#pending.get(id);
      if (!pending) continue;
      this.#pending.delete(id);
      clearTimeout(pending.timer);
      if (msg.ok === false) pending.reject(new ToolFailure(String(msg.code ?? "driver_error"), String(msg.error ?? "the helper failed")));
      else pending.resolve(msg);
    }
  }

  #fail(error: Error): void {
    this.#closed = true;
    for (const p of this.#pending.values()) {
      clearTimeout(p.timer);
      p.reject(error);
    }
    this.#pending.clear();
  }

  get alive(): boolean {
    return !this.#closed && this.#child !== null;
  }

  async request<T = Record<string, unknown>>(op: string, params: Record<string, unknown> = {}, timeoutMs = 15_000): Promise<T> {
    await this.start();
    if (this.#closed) throw new ToolFailure("driver_unavailable", "the computer_use helper is not running");
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#pending.delete(id);
        reject(new ToolFailure("timeout", `the computer_use helper did not answer ${op} within ${timeoutMs} ms`));
      }, timeoutMs);
      this.#pending.set(id, { resolve: resolve as (v: Record<string, unknown>) => void, reject, timer });
      this.#child!.stdin!.write(`${JSON.stringify({ id, op, ...params })}\n`);
    });
  }

  stop(): void {
    this.#closed = true;
    this.#child?.stdin?.end();
    this.#group?.stop(500);
  }
}
