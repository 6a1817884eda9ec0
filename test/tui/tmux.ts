import { execFileSync } from "node:child_process";
import { CLI, waitFor } from "../helpers/cli.js";

/** Drive a program in a detached tmux session as a person would: keys in, the screen out. */
export class Tmux {
  private static count = 0;
  readonly name = `agent-tui-${process.pid}-${Tmux.count++}`;

  constructor(command: string, width = 120, height = 36) {
    keepServer();
    tmux("new-session", "-d", "-s", this.name, "-x", String(width), "-y", String(height), command);
    // The pane stays after the program exits, so its last screen can still be read.
    tmux("set-option", "-t", this.name, "remain-on-exit", "on");
  }

  screen(): string {
    return tmux("capture-pane", "-p", "-t", this.name);
  }

  /** Wait until the screen matches; returns it. The failure message shows the last screen. */
  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    let last = "";
    return waitFor(
      () => `the screen to match ${pattern}; it shows:\n${last}`,
      () => {
        last = this.screen();
        return pattern.test(last) && last;
      },
      timeoutMs,
    );
  }

  /** Wait until the pattern is gone from the screen. */
  async waitForNo(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    let last = "";
    return waitFor(
      () => `${pattern} to leave the screen; it shows:\n${last}`,
      () => {
        last = this.screen();
        return !pattern.test(last) && last;
      },
      timeoutMs,
    );
  }

  /** Type literal text (no key names). */
  type(text: string): void {
    tmux("send-keys", "-t", this.name, "-l", text);
  }

  /** Press keys by tmux name: Enter, Escape, C-c, F5, M-1 … */
  press(...keys: string[]): void {
    for (const key of keys) tmux("send-keys", "-t", this.name, key);
  }

  resize(width: number, height: number): void {
    tmux("resize-window", "-t", this.name, "-x", String(width), "-y", String(height));
  }

  /** Whether the program in the pane has exited. */
  dead(): boolean {
    return tmux("display-message", "-p", "-t", this.name, "#{pane_dead}").trim() === "1";
  }

  /** Wait for the program to exit; its exit status. */
  async waitForExit(timeoutMs = 10_000): Promise<number> {
    await waitFor("the program in the pane to exit", () => this.dead(), timeoutMs);
    return Number(tmux("display-message", "-p", "-t", this.name, "#{pane_dead_status}").trim());
  }

  paneTitle(): string {
    return tmux("display-message", "-p", "-t", this.name, "#{pane_title}").trim();
  }

  kill(): void {
    try {
      tmux("kill-session", "-t", this.name);
    } catch {}
  }
}

/** This test process's own tmux server (its own socket), apart from any other tmux in use. */
const SOCKET = `agent-tui-test-${process.pid}`;
let kept = false;

/**
 * tmux exits when its last session closes, and a session created while it exits fails: one idle
 * session keeps this server up until stopServer().
 */
function keepServer(): void {
  if (kept) return;
  tmux("new-session", "-d", "-s", "keeper", "sleep 3600");
  kept = true;
}

export function stopServer(): void {
  try {
    tmux("kill-server");
  } catch {}
  kept = false;
}

export function tmux(...args: string[]): string {
  return execFileSync("tmux", ["-L", SOCKET, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The shell command that opens the TUI on `home`. */
export function tuiCommand(home: string, extra = "", env: Record<string, string> = {}): string {
  const vars = Object.entries({ AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_DEFAULT_WORKSPACE: "dir", ...env })
    .map(([k, v]) => `${k}='${v}'`)
    .join(" ");
  return `env ${vars} ${process.execPath} ${CLI} --tui ${extra}`.trim();
}
