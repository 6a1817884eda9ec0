/**
 * One desktop the agent drives: its display (the private Xvfb or a configured one), the helper
 * that reads its accessibility tree and screen, and xdotool for the input. Captures number the
 * interactive elements; each session remembers its latest capture, and an index is resolved
 * against it (an index of an older capture is refused).
 */
import { execFile } from "node:child_process";
import { ToolFailure } from "../../shared/errors.js";
import { DesktopHelper } from "./desktop-helper.js";
import { type DesktopEnv, PrivateDisplay, which } from "./private-display.js";

export type Box = [x: number, y: number, w: number, h: number];

/** One input step: pointer moves, button presses, text, keys, pauses (ms). Buttons: 1 left, 2 middle, 3 right, 4-7 the wheel. */
export type InputStep =
  | ["move", x: number, y: number]
  | ["down", button: number]
  | ["up", button: number]
  | ["click", button: number, repeat: number, delayMs: number]
  | ["type", text: string]
  | ["key", keys: string]
  | ["sleep", ms: number];

/**
 * xdotool's command names (`xdotool help`, 3.x). xdotool chains commands on one command line and
 * matches their names in any case, so `key ctrl+c exec rm x` presses ctrl+c and then RUNS `rm x`:
 * a key argument may never be one of these.
 */
export const XDOTOOL_COMMANDS: ReadonlySet<string> = new Set(
  (
    "getactivewindow getwindowfocus getwindowname getwindowpid getwindowgeometry getdisplaygeometry search selectwindow help version " +
    "behave behave_screen_edge click getmouselocation key keydown keyup mousedown mousemove mousemove_relative mouseup set_window type " +
    "windowactivate windowfocus windowkill windowclose windowquit windowmap windowminimize windowmove windowraise windowreparent windowsize " +
    "windowstate windowunmap set_num_desktops get_num_desktops set_desktop get_desktop set_desktop_for_window get_desktop_for_window " +
    "get_desktop_viewport set_desktop_viewport exec sleep"
  ).split(" "),
);

/** True when `key` would start an xdotool command instead of naming a key (see XDOTOOL_COMMANDS). */
export function isXdotoolCommand(key: string): boolean {
  return XDOTOOL_COMMANDS.has(key.toLowerCase());
}

/** The same steps as an xdotool command line (when the helper has no libxdo). */
export function xdotoolArgs(steps: InputStep[]): string[] {
  const out: string[] = [];
  for (const step of steps) {
    switch (step[0]) {
      case "move":
        out.push("mousemove", String(step[1]), String(step[2]));
        break;
      case "down":
        out.push("mousedown", String(step[1]));
        break;
      case "up":
        out.push("mouseup", String(step[1]));
        break;
      case "click":
        out.push("click", "--repeat", String(step[2]), "--delay", String(step[3]), String(step[1]));
        break;
      case "type":
        out.push("type", "--delay", "8", "--", step[1]);
        break;
      case "key": {
        const keys = step[1].split(" ").filter(Boolean);
        const command = keys.find(isXdotoolCommand);
        if (command !== undefined) throw new ToolFailure("invalid_arguments", `${JSON.stringify(command)} is an xdotool command, not a key name`);
        out.push("key", "--delay", "20", "--", ...keys);
        break;
      }
      case "sleep":
        out.push("sleep", String(step[1] / 1000));
        break;
    }
  }
  return out;
}

export interface TreeNode {
  depth: number;
  role: string;
  name: string;
  states: string[];
  box: Box | null;
  text?: string;
  value?: number;
  interactive: boolean;
}

export interface TreeWindow {
  title: string;
  role: string;
  active: boolean;
  box: Box | null;
  nodes: TreeNode[];
}

export interface TreeApp {
  name: string;
  pid: number | null;
  windows: TreeWindow[];
}

export interface Element {
  index: number;
  role: string;
  name: string;
  states: string[];
  box: Box;
  app: string;
  window: string;
  text?: string;
  value?: number;
}

export interface Capture {
  id: string;
  mode: "som" | "vision" | "ax";
  width: number;
  height: number;
  elements: Element[];
  apps: TreeApp[];
  /** Elements of each window, for the ax text (index per node, or 0). */
  indexOf: Map<TreeNode, number>;
  png?: string;
  /** Why no elements came (the accessibility bus unreachable, or no app exposes a tree). */
  note?: string;
}

const XDOTOOL_TIMEOUT_MS = 10_000;
/** Sessions whose latest capture is remembered (the oldest is forgotten first). */
const MAX_SESSIONS = 200;

function overlaps(a: Box, b: Box): boolean {
  return a[0] < b[0] + b[2] && b[0] < a[0] + a[2] && a[1] < b[1] + b[3] && b[1] < a[1] + a[3];
}

/** `box` without the part `cover` hides, when what is left is a rectangle (the cover spans a whole side). */
function uncovered(box: Box, cover: Box): Box {
  const [x, y, w, h] = box;
  const [cx, cy, cw, ch] = cover;
  if (!overlaps(box, cover)) return box;
  const spansY = cy <= y && cy + ch >= y + h;
  const spansX = cx <= x && cx + cw >= x + w;
  if (spansY && cx > x) return [x, y, cx - x, h];
  if (spansY && cx + cw < x + w) return [cx + cw, y, x + w - (cx + cw), h];
  if (spansX && cy > y) return [x, y, w, cy - y];
  if (spansX && cy + ch < y + h) return [x, cy + ch, w, y + h - (cy + ch)];
  return box;
}

function inside(x: number, y: number, b: Box): boolean {
  return x >= b[0] && x < b[0] + b[2] && y >= b[1] && y < b[1] + b[3];
}

export class DesktopDriver {
  #private: PrivateDisplay | null;
  #desktop: DesktopEnv | null = null;
  #helper: DesktopHelper | null = null;
  #starting: Promise<DesktopEnv> | null = null;
  #sessions = new Map<string, { seq: number; latest: Capture | null }>();
  #size: { width: number; height: number } | null = null;
  #xdo = false;

  constructor(private readonly options: { display: string; screen: string; env: NodeJS.ProcessEnv }) {
    this.#private = options.display ? null : new PrivateDisplay(options.env, options.screen);
  }

  get isPrivate(): boolean {
    return this.#private !== null;
  }

  /** The display once started (or configured). */
  get desktop(): DesktopEnv | null {
    return this.#desktop;
  }

  get running(): boolean {
    return this.#desktop !== null && (this.#helper?.alive ?? false);
  }

  pids(): number[] {
    return [...(this.#private?.pids() ?? []), ...(this.#helper?.pid ? [this.#helper.pid] : [])];
  }

  /** Start the display (private) and the helper, once. */
  async start(): Promise<DesktopEnv> {
    if (this.#desktop && this.#helper?.alive) return this.#desktop;
    if (!this.#starting) {
      this.#starting = (async () => {
        this.#helper?.stop();
        let desktop: DesktopEnv;
        if (this.#private) desktop = await this.#private.start();
        else {
          const env: NodeJS.ProcessEnv = { ...this.options.env, DISPLAY: this.options.display };
          desktop = { display: this.options.display, busAddress: env.DBUS_SESSION_BUS_ADDRESS ?? null, private: false, env };
        }
        const helper = new DesktopHelper(desktop.env);
        try {
          await helper.start();
          const ping = await helper.request<{ width: number; height: number; xdo: boolean }>("ping");
          this.#size = { width: ping.width, height: ping.height };
          this.#xdo = ping.xdo === true;
        } catch (error) {
          helper.stop();
          throw error;
        }
        this.#helper = helper;
        this.#desktop = desktop;
        return desktop;
      })().finally(() => {
        this.#starting = null;
      });
    }
    return this.#starting;
  }

  stop(): void {
    this.#helper?.stop();
    this.#helper = null;
    this.#private?.stop();
    this.#desktop = null;
  }

  async helper(): Promise<DesktopHelper> {
    await this.start();
    return this.#helper!;
  }

  async tree(options: { allBoxes?: boolean } = {}): Promise<{ apps: TreeApp[]; note?: string }> {
    const helper = await this.helper();
    try {
      const r = await helper.request<{ apps: TreeApp[] }>("tree", options.allBoxes ? { all_boxes: true } : {});
      return { apps: r.apps };
    } catch (error) {
      if (error instanceof ToolFailure && error.reason !== "timeout") return { apps: [], note: `the accessibility tree could not be read: ${error.message}` };
      throw error;
    }
  }

  async accessible(): Promise<{ reachable: boolean; why?: string; apps?: number }> {
    const helper = await this.helper();
    return helper.request("accessible", {}, 10_000);
  }

  /** Read the tree, number the visible enabled interactive elements, and (som, vision) take the screenshot. */
  async capture(sessionId: string, mode: Capture["mode"]): Promise<Capture> {
    const { apps, note } = await this.tree({ allBoxes: mode === "ax" });
    const { width, height } = this.#size!;
    const screen: Box = [0, 0, width, height];
    // The active window is on top (without a window manager, focus_app raises and focuses it):
    // what it covers in other windows is not clickable, so it is not numbered.
    const windows = apps.flatMap((app) => app.windows.map((w) => ({ app, w })));
    const active = windows.filter((x) => x.w.active && x.w.box).map((x) => x.w.box!);
    const elements: Element[] = [];
    const indexOf = new Map<TreeNode, number>();
    for (const { app, w } of [...windows].sort((a, b) => Number(b.w.active) - Number(a.w.active))) {
      for (const node of w.nodes) {
        if (!node.interactive || !node.box || !overlaps(node.box, screen)) continue;
        let box = node.box;
        if (!w.active) for (const b of active) box = uncovered(box, b);
        const [x, y, bw, bh] = box;
        const cx = x + bw / 2;
        const cy = y + bh / 2;
        if (!w.active && active.some((b) => inside(cx, cy, b))) continue;
        const clipped: Box = [Math.max(0, x), Math.max(0, y), Math.min(x + bw, width) - Math.max(0, x), Math.min(y + bh, height) - Math.max(0, y)];
        const el: Element = { index: elements.length + 1, role: node.role, name: node.name, states: node.states, box: clipped, app: app.name, window: w.title };
        if (node.text !== undefined) el.text = node.text;
        if (node.value !== undefined) el.value = node.value;
        elements.push(el);
        indexOf.set(node, el.index);
      }
    }
    const state = this.#sessions.get(sessionId) ?? { seq: 0, latest: null };
    state.seq++;
    const capture: Capture = { id: `c${state.seq}`, mode, width, height, elements, apps, indexOf };
    if (!elements.length)
      capture.note =
        note ??
        (apps.length
          ? "the applications on screen expose no accessible elements here: use capture mode vision and coordinates"
          : "no application on this display exposes an accessibility tree: use capture mode vision and coordinates");
    if (mode !== "ax") {
      const helper = await this.helper();
      const marks = mode === "som" ? elements.map((e) => [e.index, ...e.box]) : [];
      const shot = await helper.request<{ png: string }>("shot", { marks });
      capture.png = shot.png;
    }
    // Kept for the numbers only (not the image), for the most recent sessions.
    state.latest = { ...capture, png: undefined };
    this.#sessions.delete(sessionId);
    this.#sessions.set(sessionId, state);
    if (this.#sessions.size > MAX_SESSIONS) this.#sessions.delete(this.#sessions.keys().next().value!);
    return capture;
  }

  /** An element of the session's latest capture; an index of an older capture, or none taken, is refused. */
  element(sessionId: string, index: number, captureId?: string): Element {
    const latest = this.#sessions.get(sessionId)?.latest;
    if (!latest) throw new ToolFailure("stale_element", `element ${index}: no capture yet in this session; run capture first`);
    if (captureId && captureId !== latest.id)
      throw new ToolFailure(
        "stale_element",
        `element ${index} is from capture ${captureId}, but the latest capture is ${latest.id}: the screen may have changed; use the numbers of ${latest.id} or capture again`,
      );
    const el = latest.elements[index - 1];
    if (!el) throw new ToolFailure("stale_element", `capture ${latest.id} has no element ${index} (it numbered ${latest.elements.length}); capture again`);
    return el;
  }

  latestCapture(sessionId: string): Capture | null {
    return this.#sessions.get(sessionId)?.latest ?? null;
  }

  forgetSession(sessionId: string): void {
    this.#sessions.delete(sessionId);
  }

  get size(): { width: number; height: number } | null {
    return this.#size;
  }

  /** Send input: through the helper's libxdo (no process start per action), else the xdotool command. */
  async input(steps: InputStep[], signal?: AbortSignal): Promise<void> {
    const helper = await this.helper();
    if (this.#xdo) {
      const ms = steps.reduce((n, s) => n + (s[0] === "sleep" ? s[1] : s[0] === "type" ? s[1].length * 10 : 50), 0);
      await helper.request("input", { steps }, 10_000 + ms);
      return;
    }
    await this.xdotool(xdotoolArgs(steps), signal);
  }

  /** Run xdotool with these arguments on the display (argv, never a shell line). */
  async xdotool(args: string[], signal?: AbortSignal): Promise<string> {
    const desktop = await this.start();
    const bin = which("xdotool", desktop.env);
    if (!bin) throw new ToolFailure("driver_unavailable", "xdotool is not installed (package xdotool): agent computer-use install");
    return new Promise((resolve, reject) => {
      execFile(bin, args, { env: desktop.env, timeout: XDOTOOL_TIMEOUT_MS, signal, maxBuffer: 1024 * 1024 }, (error, stdout, stderr) => {
        if (error) reject(new ToolFailure("action_failed", `xdotool ${args[0]} failed: ${(stderr || error.message).trim().slice(0, 300)}`));
        else resolve(stdout);
      });
    });
  }
}
