import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CLI, waitFor } from "../helpers/cli.js";

/** A wait reads the screen again at least this often even when the pane wrote nothing. */
const RECAPTURE_MS = 1000;
/** The output folders of the panes not killed yet (removed by stopServer too). */
const outputDirs = new Set<string>();
function newOutputDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "agent-tmux-"));
  outputDirs.add(dir);
  return dir;
}

/** Drive a program in a detached tmux session as a person would: keys in, the screen out. */
export class Tmux {
  private static count = 0;
  readonly name = `agent-tui-${process.pid}-${Tmux.count++}`;

  /** The pane's output is copied here (pipe-pane): a wait reads the screen only after it grew. */
  private readonly outputDir = newOutputDir();
  private readonly outputFile = join(this.outputDir, "pane.out");

  constructor(command: string, width = 120, height = 36) {
    keepServer();
    tmux("new-session", "-d", "-s", this.name, "-x", String(width), "-y", String(height), command);
    // The pane stays after the program exits, so its last screen can still be read.
    tmux("set-option", "-t", this.name, "remain-on-exit", "on");
    tmux("pipe-pane", "-t", this.name, `cat >> '${this.outputFile}'`);
  }

  screen(): string {
    return tmux("capture-pane", "-p", "-t", this.name);
  }

  /** Bytes the pane has written so far (-1 before the first). */
  private outputSize(): number {
    try {
      return statSync(this.outputFile).size;
    } catch {
      return -1;
    }
  }

  /**
   * A check for `waitFor` on the screen. The screen changes when the program writes, so it is
   * read again only once the pane's output grew (a stat, not a tmux process per poll), and at
   * least every RECAPTURE_MS whatever happened (a resize, a pane that died).
   */
  private screenCheck(ok: (screen: string) => boolean, onScreen: (screen: string) => void): () => string | false {
    let size = Number.NaN;
    let at = 0;
    let screen = "";
    return () => {
      const now = Date.now();
      const grown = this.outputSize();
      if (grown !== size || now - at >= RECAPTURE_MS) {
        size = grown;
        at = now;
        screen = this.screen();
        onScreen(screen);
        return ok(screen) && screen;
      }
      return false;
    };
  }

  /** Wait until the screen matches; returns it. The failure message shows the last screen. */
  async waitFor(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    let last = "";
    return waitFor(
      () => `the screen to match ${pattern}; it shows:\n${last}`,
      this.screenCheck(
        (screen) => pattern.test(screen),
        (screen) => {
          last = screen;
        },
      ),
      timeoutMs,
    );
  }

  /** Wait until the pattern is gone from the screen. */
  async waitForNo(pattern: RegExp, timeoutMs = 15_000): Promise<string> {
    let last = "";
    return waitFor(
      () => `${pattern} to leave the screen; it shows:\n${last}`,
      this.screenCheck(
        (screen) => !pattern.test(screen),
        (screen) => {
          last = screen;
        },
      ),
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
    rmSync(this.outputDir, { recursive: true, force: true });
    outputDirs.delete(this.outputDir);
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
  for (const dir of outputDirs) rmSync(dir, { recursive: true, force: true });
  outputDirs.clear();
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
