/**
 * `computer_use` (docs/computer-use.md): the agent sees an X11 desktop (a screenshot with
 * numbered marks, the plain screenshot, or the accessibility tree as text) and drives it with
 * the mouse and keyboard. Offered only where the profile sets `computer_use.enabled`; every
 * action that changes the screen goes through the approval service, and every action is
 * logged with the session's id.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import { ToolFailure } from "../../shared/errors.js";
import type { ApprovalAsk } from "../../shared/protocol/approvals.js";
import { multimodalResult } from "../tools/multimodal.js";
import { defineTool, type ToolDefinition } from "../tools/definition.js";
import type { ToolContext } from "../tools/types.js";
import type { ComputerUseApi } from "./api.js";
import { type Capture, type DesktopDriver, type Element, type InputStep, isXdotoolCommand, type TreeApp, type TreeWindow } from "./desktop-driver.js";

export const ACTIONS = [
  "capture",
  "click",
  "double_click",
  "right_click",
  "middle_click",
  "drag",
  "scroll",
  "type",
  "key",
  "wait",
  "list_apps",
  "focus_app",
] as const;
type Action = (typeof ACTIONS)[number];

/** The actions that change what is on the screen: asked through the approval service. */
const CHANGES_SCREEN: ReadonlySet<Action> = new Set(["click", "double_click", "right_click", "middle_click", "drag", "scroll", "type", "key", "focus_app"]);
/** One xdotool key name or combination (ctrl+shift+t, Return, KP_Enter, F5). */
const KEY_COMBO = /^[A-Za-z0-9_]+(\+[A-Za-z0-9_]+)*$/;
const MAX_WAIT_SECONDS = 30;

const Args = z
  .object({
    action: z.enum(ACTIONS),
    mode: z
      .enum(["som", "vision", "ax"])
      .optional()
      .describe("capture: som (screenshot with numbered marks, default), vision (plain screenshot), ax (accessibility tree as text)"),
    element: z.number().int().min(1).optional().describe("The element's number in the latest capture"),
    capture_id: z.string().optional().describe("The capture the element number is from (refused when it is not the latest)"),
    x: z.number().int().min(0).optional().describe("Screen x, when no element is given"),
    y: z.number().int().min(0).optional().describe("Screen y, when no element is given"),
    to_element: z.number().int().min(1).optional().describe("drag: the element to drop on"),
    to_x: z.number().int().min(0).optional().describe("drag: the x to drop at"),
    to_y: z.number().int().min(0).optional().describe("drag: the y to drop at"),
    direction: z.enum(["up", "down", "left", "right"]).optional().describe("scroll direction (default down)"),
    amount: z.number().int().min(1).max(50).optional().describe("scroll: wheel clicks (default 3)"),
    text: z.string().optional().describe("type: the text to type"),
    keys: z.string().optional().describe("key: xdotool key names or combinations, space-separated (ctrl+a Return)"),
    seconds: z.number().positive().max(MAX_WAIT_SECONDS).optional().describe("wait: seconds (default 1)"),
    app: z
      .string()
      .min(1)
      .optional()
      .describe("focus_app: the window title or application name as list_apps shows it (case-insensitive), or a start of it that only one has"),
  })
  .strict();
type Args = z.infer<typeof Args>;

function describe(el: Element): string {
  const [x, y, w, h] = el.box;
  const extra = [
    el.text !== undefined ? `text=${JSON.stringify(el.text)}` : "",
    el.value !== undefined ? `value=${el.value}` : "",
    ...el.states.filter((s) => ["focused", "checked", "pressed", "selected", "expanded"].includes(s)),
  ].filter(Boolean);
  return `[${el.index}] ${el.role} ${JSON.stringify(el.name)} at ${x},${y} ${w}x${h}${extra.length ? ` (${extra.join(", ")})` : ""} — ${el.window || el.app}`;
}

function appsLine(capture: Pick<Capture, "apps">): string {
  const windows = capture.apps.flatMap((a) => a.windows.map((w) => `${a.name}: ${JSON.stringify(w.title)}${w.active ? " (active)" : ""}`));
  return windows.length ? `Windows: ${windows.join("; ")}` : "Windows: none with an accessibility tree";
}

function summary(capture: Capture, display: string): string {
  const head = `capture ${capture.id} (${capture.mode}) of display ${display}, ${capture.width}x${capture.height}: ${capture.elements.length} element(s); refer to one as element N with capture_id ${capture.id}`;
  return [head, ...capture.elements.map(describe), ...(capture.note ? [`Note: ${capture.note}`] : []), appsLine(capture)].join("\n");
}

/** The accessibility tree as indented text; interactive elements carry their numbers. */
function axText(capture: Capture, display: string): string {
  const lines = [
    `capture ${capture.id} (ax) of display ${display}, ${capture.width}x${capture.height}: ${capture.elements.length} numbered element(s); refer to one as element N with capture_id ${capture.id}`,
  ];
  for (const app of capture.apps) {
    lines.push(`app ${JSON.stringify(app.name)}${app.pid ? ` pid ${app.pid}` : ""}`);
    for (const w of app.windows) {
      for (const node of w.nodes) {
        const n = capture.indexOf.get(node);
        const states = node.states.filter((s) => !["showing", "visible", "enabled", "sensitive", "focusable"].includes(s));
        const bits = [
          n ? `[${n}]` : "",
          node.role,
          node.name ? JSON.stringify(node.name) : "",
          node.text !== undefined ? `text=${JSON.stringify(node.text)}` : "",
          node.value !== undefined ? `value=${node.value}` : "",
          states.length ? `{${states.join(",")}}` : "",
          node.box ? `@${node.box.join(",")}` : "",
        ].filter(Boolean);
        lines.push(`${"  ".repeat(node.depth + 1)}${bits.join(" ")}`);
      }
    }
  }
  if (capture.note) lines.push(`Note: ${capture.note}`);
  return lines.join("\n");
}

function center(el: Element): [number, number] {
  return [Math.round(el.box[0] + el.box[2] / 2), Math.round(el.box[1] + el.box[3] / 2)];
}

/** Where an action points: an element of the latest capture, or x/y. */
function point(driver: DesktopDriver, ctx: ToolContext, args: Args, which: "from" | "to"): { x: number; y: number; element?: Element } {
  const index = which === "from" ? args.element : args.to_element;
  const x = which === "from" ? args.x : args.to_x;
  const y = which === "from" ? args.y : args.to_y;
  if (index !== undefined) {
    const el = driver.element(ctx.sessionId, index, args.capture_id);
    const [cx, cy] = center(el);
    return { x: cx, y: cy, element: el };
  }
  if (x !== undefined && y !== undefined) {
    const size = driver.size;
    if (size && (x >= size.width || y >= size.height))
      throw new ToolFailure("invalid_arguments", `(${x}, ${y}) is off the ${size.width}x${size.height} screen`);
    return { x, y };
  }
  const names = which === "from" ? "element, or x and y" : "to_element, or to_x and to_y";
  throw new ToolFailure("invalid_arguments", `${args.action} needs ${names}`);
}

export function computerUseTool(api: () => ComputerUseApi): ToolDefinition<Args> {
  return defineTool({
    name: "computer_use",
    description:
      "See and drive a desktop (X11). capture (mode som: screenshot with numbered marks on the interactive elements; vision: plain screenshot; ax: the accessibility tree as text) numbers the elements; click, double_click, right_click, middle_click, drag and scroll take an element number of the latest capture (with its capture_id) or x/y; type sends text to the focused field; key presses xdotool keys (Return, ctrl+a); wait pauses; list_apps and focus_app switch windows. Capture again after acting to see the result.",
    toolset: "computer_use",
    args: Args,
    requires: "computer_use.enabled: true in the profile's config (agent config set computer_use.enabled true), and the driver (agent computer-use status)",
    available: (ctx) => api().config(ctx.profile).enabled,
    approval(args, ctx): ApprovalAsk | null {
      // Looking (capture, list_apps, wait) changes nothing. The rest goes to the approval service,
      // whose rules decide whether a person is asked (docs/approvals.md).
      if (!CHANGES_SCREEN.has(args.action)) return null;
      const cfg = api().config(ctx.profile);
      const display = cfg.display || "private Xvfb";
      const target =
        args.element !== undefined ? `element ${args.element}` : args.x !== undefined ? `(${args.x}, ${args.y})` : args.app ? JSON.stringify(args.app) : "";
      const dropAt = args.to_element !== undefined ? `element ${args.to_element}` : args.to_x !== undefined ? `(${args.to_x}, ${args.to_y})` : "";
      const what =
        args.action === "type"
          ? typedSummary(args.text ?? "")
          : args.action === "key"
            ? `key ${args.keys ?? ""}`
            : `${args.action}${target ? ` ${target}` : ""}${args.action === "drag" && dropAt ? ` to ${dropAt}` : ""}`;
      return {
        kind: "desktop",
        tool: "computer_use",
        summary: `computer_use on ${display}: ${what}`,
        details: { tool: "computer_use", args: { ...args }, desktop: { display, private: !cfg.display, action: args.action } },
      };
    },
    async run(args, ctx) {
      const computer = api();
      const cfg = computer.config(ctx.profile);
      if (!cfg.enabled) throw new ToolFailure("not_configured", "computer_use is off for this profile (computer_use.enabled)");
      if (CHANGES_SCREEN.has(args.action)) validate(args, cfg.max_type_chars);
      const driver = computer.driver(ctx.profile);
      const desktop = await driver.start();
      const started = performance.now();
      let logged = "";
      try {
        const out = await act(driver, args, ctx, desktop.display, (line) => {
          logged = line;
        });
        computer.logAction(ctx.sessionId, `${args.action}${logged ? ` ${logged}` : ""} on ${desktop.display} (${Math.round(performance.now() - started)} ms)`);
        return out;
      } catch (error) {
        computer.logAction(ctx.sessionId, `${args.action} failed on ${desktop.display}: ${error instanceof Error ? error.message : String(error)}`);
        throw error;
      }
    },
  });
}

/** Characters of a `type` shown in its approval question; a longer text says that the rest is not shown. */
const SUMMARY_TYPE_CHARS = 500;

/** What a `type` would type, for the person deciding: the whole text, or its start and how much is not shown. */
function typedSummary(text: string): string {
  const chars = [...text];
  if (chars.length <= SUMMARY_TYPE_CHARS) return `type ${JSON.stringify(text)}`;
  return `type ${chars.length} characters, only the first ${SUMMARY_TYPE_CHARS} shown: ${JSON.stringify(chars.slice(0, SUMMARY_TYPE_CHARS).join(""))}…`;
}

function validate(args: Args, maxType: number): void {
  if (args.action === "type") {
    if (args.text === undefined || args.text === "") throw new ToolFailure("invalid_arguments", "type needs text");
    const n = [...args.text].length;
    if (n > maxType)
      throw new ToolFailure(
        "too_long",
        `type refuses ${n} characters in one call: at most ${maxType} (computer_use.max_type_chars); split it, or paste it another way`,
      );
  }
  if (args.action === "key") {
    const keys = (args.keys ?? "").trim().split(/\s+/).filter(Boolean);
    if (!keys.length) throw new ToolFailure("invalid_arguments", "key needs keys (for example Return, ctrl+a, alt+F4)");
    // An xdotool command name (exec, type, windowkill, …) is no key: on xdotool's command line it would run that command.
    const bad = keys.find((k) => !KEY_COMBO.test(k) || isXdotoolCommand(k));
    if (bad)
      throw new ToolFailure("invalid_arguments", `not an xdotool key name or combination: ${JSON.stringify(bad)} (for example Return, ctrl+shift+t, KP_Enter)`);
  }
  if (args.action === "focus_app" && !args.app) throw new ToolFailure("invalid_arguments", "focus_app needs app (a name or window title from list_apps)");
}

const BUTTON: Record<string, number> = { click: 1, double_click: 1, right_click: 3, middle_click: 2 };
const WHEEL: Record<string, number> = { up: 4, down: 5, left: 6, right: 7 };

async function act(
  driver: DesktopDriver,
  args: Args,
  ctx: ToolContext,
  display: string,
  log: (line: string) => void,
): Promise<{ ok: boolean; output: unknown }> {
  const at = (p: { x: number; y: number; element?: Element }) =>
    p.element ? `element ${p.element.index} (${p.element.role} ${JSON.stringify(p.element.name)}) at ${p.x},${p.y}` : `${p.x},${p.y}`;
  const done = (extra: Record<string, unknown>) => ({
    ok: true,
    output: { ok: true, action: args.action, display, ...extra, next: "capture again to see the result" },
  });
  switch (args.action) {
    case "capture": {
      const mode = args.mode ?? "som";
      const capture = await driver.capture(ctx.sessionId, mode);
      log(`${mode} ${capture.id}: ${capture.elements.length} element(s)`);
      if (mode === "ax") return { ok: true, output: axText(capture, display) };
      const text = summary(capture, display);
      return { ok: true, output: multimodalResult({ text, images: [{ mime: "image/png", base64: capture.png! }], summary: text }) };
    }
    case "click":
    case "double_click":
    case "right_click":
    case "middle_click": {
      const p = point(driver, ctx, args, "from");
      await driver.input([["move", p.x, p.y], args.action === "double_click" ? ["click", 1, 2, 80] : ["click", BUTTON[args.action]!, 1, 0]], ctx.signal);
      log(at(p));
      return done({ at: { x: p.x, y: p.y }, ...(p.element ? { element: p.element.index, name: p.element.name, role: p.element.role } : {}) });
    }
    case "drag": {
      const from = point(driver, ctx, args, "from");
      const to = point(driver, ctx, args, "to");
      // Press, move in steps (toolkits start a drag only after some motion), release.
      const steps: InputStep[] = [
        ["move", from.x, from.y],
        ["down", 1],
        ["sleep", 50],
      ];
      for (const f of [0.1, 0.35, 0.65, 1])
        steps.push(["move", Math.round(from.x + (to.x - from.x) * f), Math.round(from.y + (to.y - from.y) * f)], ["sleep", 40]);
      steps.push(["up", 1]);
      await driver.input(steps, ctx.signal);
      log(`from ${at(from)} to ${at(to)}`);
      return done({ from: { x: from.x, y: from.y }, to: { x: to.x, y: to.y } });
    }
    case "scroll": {
      const p = args.element !== undefined || args.x !== undefined ? point(driver, ctx, args, "from") : null;
      const direction = args.direction ?? "down";
      const amount = args.amount ?? 3;
      await driver.input([...(p ? [["move", p.x, p.y] as InputStep] : []), ["click", WHEEL[direction]!, amount, 20]], ctx.signal);
      log(`${direction} ${amount}${p ? ` at ${at(p)}` : ""}`);
      return done({ direction, amount, ...(p ? { at: { x: p.x, y: p.y } } : {}) });
    }
    case "type": {
      const text = args.text!;
      await driver.input([["type", text]], ctx.signal);
      // The log says how much was typed, never what (it may be a password).
      log(`${[...text].length} character(s)`);
      return done({ typed_characters: [...text].length });
    }
    case "key": {
      const keys = args.keys!.trim().split(/\s+/);
      // One step per key: libxdo takes one sequence at a time ("ctrl+a Return" whole is invalid to it).
      await driver.input(
        keys.map((k): InputStep => ["key", k]),
        ctx.signal,
      );
      log(keys.join(" "));
      return done({ keys });
    }
    case "wait": {
      const seconds = args.seconds ?? 1;
      await sleep(seconds * 1000, undefined, { signal: ctx.signal });
      log(`${seconds} s`);
      return done({ seconds });
    }
    case "list_apps": {
      const { apps, note } = await driver.tree();
      const list = apps.map((a) => ({
        app: a.name,
        pid: a.pid,
        windows: a.windows.map((w) => ({ title: w.title, active: w.active, box: w.box })),
      }));
      log(`${list.length} app(s)`);
      return { ok: true, output: { display, apps: list, ...(note ? { note } : {}) } };
    }
    case "focus_app": {
      const { apps } = await driver.tree();
      const match = pickWindow(apps, args.app!);
      const ids = match.a.pid
        ? (await driver.xdotool(["search", "--onlyvisible", "--pid", String(match.a.pid)], ctx.signal).catch(() => "")).split(/\s+/).filter(Boolean)
        : [];
      let id: string | undefined;
      for (const candidate of ids) {
        const name = (await driver.xdotool(["getwindowname", candidate], ctx.signal).catch(() => "")).trim();
        if (name === match.w.title) {
          id = candidate;
          break;
        }
      }
      id ??= ids[0];
      if (!id) throw new ToolFailure("not_found", `the window ${JSON.stringify(match.w.title)} has no X window to focus`);
      await driver.xdotool(["windowmap", id, "windowraise", id, "windowfocus", "--sync", id], ctx.signal);
      log(`${JSON.stringify(match.w.title)} (${match.a.name}, window ${id})`);
      return done({ app: match.a.name, window: match.w.title });
    }
  }
}

/**
 * The window `focus_app` means by `wanted` (case-insensitive): a window whose title is exactly
 * it, else an app whose name is exactly it (its active window, else its first), else the one
 * window whose title (or the one app whose name) starts with it. Several candidates at a step:
 * refused, naming them, as is a text found only inside titles (no window is picked by a part).
 */
export function pickWindow(apps: readonly TreeApp[], wanted: string): { a: TreeApp; w: TreeWindow } {
  const want = wanted.trim().toLowerCase();
  const all = apps.flatMap((a) => a.windows.map((w) => ({ a, w })));
  const describe = (list: ReadonlyArray<{ a: TreeApp; w: TreeWindow }>) =>
    list
      .slice(0, 20)
      .map(({ a, w }) => `${a.name}: ${JSON.stringify(w.title)}`)
      .join("; ");
  const ambiguous = (how: string, list: ReadonlyArray<{ a: TreeApp; w: TreeWindow }>) =>
    new ToolFailure(
      "ambiguous",
      `${list.length} windows ${how} ${JSON.stringify(wanted)}: ${describe(list)}; give the whole window title (as list_apps shows it)`,
    );
  const appWindow = (a: TreeApp) => ({ a, w: a.windows.find((w) => w.active) ?? a.windows[0]! });
  const exactTitle = all.filter(({ w }) => w.title.toLowerCase() === want);
  if (exactTitle.length === 1) return exactTitle[0]!;
  if (exactTitle.length > 1) throw ambiguous("are titled", exactTitle);
  const exactApp = apps.filter((a) => a.windows.length > 0 && a.name.toLowerCase() === want);
  if (exactApp.length === 1) return appWindow(exactApp[0]!);
  if (exactApp.length > 1) throw ambiguous("belong to apps named", exactApp.map(appWindow));
  const prefixTitle = all.filter(({ w }) => w.title.toLowerCase().startsWith(want));
  if (prefixTitle.length === 1) return prefixTitle[0]!;
  if (prefixTitle.length > 1) throw ambiguous("have titles starting with", prefixTitle);
  const prefixApp = apps.filter((a) => a.windows.length > 0 && a.name.toLowerCase().startsWith(want));
  if (prefixApp.length === 1) return appWindow(prefixApp[0]!);
  if (prefixApp.length > 1) throw ambiguous("belong to apps whose names start with", prefixApp.map(appWindow));
  const inside = all.filter(({ w }) => want !== "" && w.title.toLowerCase().includes(want));
  const hint = inside.length ? ` (only inside the titles of ${describe(inside)}: give the title from its start)` : "";
  throw new ToolFailure("not_found", `no window matches ${JSON.stringify(wanted)}${hint}; windows: ${describe(all) || "none"}`);
}
