import blessed from "blessed";

/**
 * The TUI's one palette. Every view and widget asks it for a colour by role (`fg("muted")`,
 * `color("border")`), never by a colour name, so the dark and light themes, the terminal's colour
 * depth and NO_COLOR are decided here once.
 *
 * - Theme: `display.theme` (dark, light or auto); auto asks the terminal's background (OSC 11,
 *   else `COLORFGBG`) and falls back to dark.
 * - Depth: 24-bit when `COLORTERM` is truecolor/24bit, 256 colours when the terminal has them,
 *   else the 8 ANSI colours, chosen so that nothing is drawn in black or an unreadable blue.
 * - NO_COLOR (any value): no colour at all; bold, underline and inverse still mark things.
 */

export type ThemeName = "dark" | "light";
export type ColorDepth = "truecolor" | "256" | "8" | "none";

export const ROLES = [
  "text",
  "muted",
  "accent",
  "heading",
  "link",
  "code",
  "ok",
  "warn",
  "error",
  "special",
  "border",
  "borderActive",
  "chromeBg",
  "chromeFg",
  "tabActiveBg",
  "tabActiveFg",
  "statusBg",
  "diffAdd",
  "diffDel",
  "diffHunk",
  "synKeyword",
  "synString",
  "synNumber",
  "synComment",
  "synFunction",
  "synType",
  "synBuiltin",
  "synAttr",
  "synMeta",
  "synVariable",
  "synTag",
] as const;
export type Role = (typeof ROLES)[number];

type Palette = Record<Role, string>;

const DARK: Palette = {
  text: "#c9d1d9",
  muted: "#8b949e",
  accent: "#58a6ff",
  heading: "#79c0ff",
  link: "#58a6ff",
  code: "#e3b341",
  ok: "#3fb950",
  warn: "#d29922",
  error: "#f85149",
  special: "#bc8cff",
  border: "#484f58",
  borderActive: "#58a6ff",
  chromeBg: "#161b22",
  chromeFg: "#8b949e",
  tabActiveBg: "#30363d",
  tabActiveFg: "#f0f6fc",
  statusBg: "#161b22",
  diffAdd: "#3fb950",
  diffDel: "#f85149",
  diffHunk: "#79c0ff",
  synKeyword: "#c678dd",
  synString: "#98c379",
  synNumber: "#d19a66",
  synComment: "#7f848e",
  synFunction: "#61afef",
  synType: "#e5c07b",
  synBuiltin: "#56b6c2",
  synAttr: "#d19a66",
  synMeta: "#56b6c2",
  synVariable: "#e06c75",
  synTag: "#e06c75",
};

const LIGHT: Palette = {
  text: "#24292f",
  muted: "#57606a",
  accent: "#0969da",
  heading: "#0550ae",
  link: "#0969da",
  code: "#953800",
  ok: "#1a7f37",
  warn: "#9a6700",
  error: "#cf222e",
  special: "#8250df",
  border: "#afb8c1",
  borderActive: "#0969da",
  chromeBg: "#eaeef2",
  chromeFg: "#57606a",
  tabActiveBg: "#ffffff",
  tabActiveFg: "#0969da",
  statusBg: "#eaeef2",
  diffAdd: "#1a7f37",
  diffDel: "#cf222e",
  diffHunk: "#8250df",
  synKeyword: "#cf222e",
  synString: "#0a3069",
  synNumber: "#0550ae",
  synComment: "#6e7781",
  synFunction: "#8250df",
  synType: "#953800",
  synBuiltin: "#0550ae",
  synAttr: "#0550ae",
  synMeta: "#0550ae",
  synVariable: "#953800",
  synTag: "#116329",
};

/**
 * The 8-colour fallback: names of the ANSI colours, none black or blue (unreadable on the usual
 * backgrounds); "" is the terminal's own foreground. Chrome backgrounds are left to the terminal.
 */
const EIGHT: Record<ThemeName, Record<Role, string>> = {
  dark: {
    text: "",
    muted: "",
    accent: "cyan",
    heading: "cyan",
    link: "cyan",
    code: "yellow",
    ok: "green",
    warn: "yellow",
    error: "red",
    special: "magenta",
    border: "white",
    borderActive: "cyan",
    chromeBg: "",
    chromeFg: "",
    tabActiveBg: "",
    tabActiveFg: "",
    statusBg: "",
    diffAdd: "green",
    diffDel: "red",
    diffHunk: "cyan",
    synKeyword: "magenta",
    synString: "green",
    synNumber: "yellow",
    synComment: "white",
    synFunction: "cyan",
    synType: "yellow",
    synBuiltin: "cyan",
    synAttr: "yellow",
    synMeta: "cyan",
    synVariable: "red",
    synTag: "red",
  },
  light: {
    text: "",
    muted: "",
    accent: "magenta",
    heading: "magenta",
    link: "magenta",
    code: "red",
    ok: "green",
    warn: "red",
    error: "red",
    special: "magenta",
    border: "",
    borderActive: "magenta",
    chromeBg: "",
    chromeFg: "",
    tabActiveBg: "",
    tabActiveFg: "",
    statusBg: "",
    diffAdd: "green",
    diffDel: "red",
    diffHunk: "magenta",
    synKeyword: "magenta",
    synString: "green",
    synNumber: "red",
    synComment: "",
    synFunction: "magenta",
    synType: "red",
    synBuiltin: "green",
    synAttr: "red",
    synMeta: "magenta",
    synVariable: "red",
    synTag: "green",
  },
};

interface State {
  name: ThemeName;
  depth: ColorDepth;
  values: Record<Role, string>;
  fgTags: Record<Role, string>;
  bgTags: Record<Role, string>;
}

let state: State = build("dark", "256");

function build(name: ThemeName, depth: ColorDepth): State {
  const values = {} as Record<Role, string>;
  const fgTags = {} as Record<Role, string>;
  const bgTags = {} as Record<Role, string>;
  const palette = name === "light" ? LIGHT : DARK;
  for (const role of ROLES) {
    const v = depth === "none" ? "" : depth === "8" ? EIGHT[name][role] : palette[role];
    values[role] = v;
    fgTags[role] = v ? `{${v}-fg}` : "";
    bgTags[role] = v ? `{${v}-bg}` : "";
  }
  return { name, depth, values, fgTags, bgTags };
}

/** The colour depth a terminal offers, from its environment (NO_COLOR wins). */
export function colorDepth(env: NodeJS.ProcessEnv = process.env, terminal?: string): ColorDepth {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return "none";
  const colorterm = (env.COLORTERM ?? "").trim().toLowerCase();
  const term = (terminal ?? env.TERM ?? "").trim();
  if (term === "dumb") return "none";
  if (colorterm === "truecolor" || colorterm === "24bit" || /-(direct|truecolor)$/.test(term)) return "truecolor";
  if (/256colou?r/.test(term) || colorterm) return "256";
  return "8";
}

/** Dark or light from `COLORFGBG` ("15;0": light text on a dark background), or null. */
export function themeFromColorFgBg(value: string | undefined): ThemeName | null {
  const bg = Number((value ?? "").split(";").pop());
  if (!value || !Number.isInteger(bg)) return null;
  // 0-6 and 8 are dark backgrounds in the 16-colour palette; 7 and 9-15 light.
  return bg === 7 || bg >= 9 ? "light" : "dark";
}

/** Dark or light from an OSC 11 answer (`rgb:RRRR/GGGG/BBBB`), or null. */
export function themeFromOsc11(answer: string): ThemeName | null {
  const m = /rgb:([0-9a-f]{1,4})\/([0-9a-f]{1,4})\/([0-9a-f]{1,4})/i.exec(answer);
  if (!m) return null;
  const [r, g, b] = [m[1]!, m[2]!, m[3]!].map((h) => Number.parseInt(h, 16) / (16 ** h.length - 1));
  const luminance = 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
  return luminance > 0.5 ? "light" : "dark";
}

/** Choose the theme: `display.theme` when it names one, else what the terminal said, else dark. */
export function setTheme(options: { setting?: string | null; detected?: ThemeName | null; depth: ColorDepth }): void {
  const setting = (options.setting ?? "").trim().toLowerCase();
  const name: ThemeName = setting === "light" || setting === "dark" ? setting : (options.detected ?? "dark");
  state = build(name, options.depth);
}

export function currentTheme(): { name: ThemeName; depth: ColorDepth } {
  return { name: state.name, depth: state.depth };
}

/** The blessed tag that opens a role's foreground ("" without colour); `{/}` closes it. */
export function fg(role: Role): string {
  return state.fgTags[role];
}

/** The blessed tag that opens a role's background ("" without colour). */
export function bg(role: Role): string {
  return state.bgTags[role];
}

/** A role's colour for a widget's style object (undefined: the terminal's default). */
export function color(role: Role): string | undefined {
  return state.values[role] || undefined;
}

/** The status colours the board, runs and components share. */
export function statusRole(status: string): Role {
  switch (status) {
    case "running":
    case "degraded":
    case "scheduled":
      return "warn";
    case "blocked":
    case "failed":
    case "error":
    case "down":
      return "error";
    case "done":
    case "ok":
    case "completed":
      return "ok";
    case "ready":
      return "accent";
    case "review":
      return "special";
    case "archived":
    case "disabled":
      return "muted";
    default:
      return "text";
  }
}

/**
 * 24-bit colour on a terminal that has it: blessed keeps colours as 256-colour indexes, so the
 * SGR sequences it writes are rewritten on their way out, each index that stands for one of the
 * palette's colours back to that colour's exact RGB.
 */
export function installTruecolor(screen: blessed.Widgets.Screen): void {
  if (state.depth !== "truecolor") return;
  const colors = (blessed as unknown as { colors: { match(hex: string): number } }).colors;
  const exact = new Map<number, string>();
  for (const role of ROLES) {
    const hex = state.values[role];
    if (!hex.startsWith("#")) continue;
    const index = colors.match(hex);
    if (index >= 0 && !exact.has(index)) {
      const n = Number.parseInt(hex.slice(1), 16);
      exact.set(index, `${(n >> 16) & 255};${(n >> 8) & 255};${n & 255}`);
    }
  }
  const program = screen.program as unknown as { _owrite(text: string): unknown };
  const write = program._owrite.bind(program);
  const sgr = /\x1b\[([0-9;]*)m/g;
  const inner = /(^|;)([34]8);5;(\d+)/g;
  program._owrite = (text: string) =>
    write(
      typeof text === "string" && text.includes(";5;")
        ? text.replace(sgr, (all, params: string) => {
            if (!params.includes(";5;")) return all;
            return `\x1b[${params.replace(inner, (m, pre: string, kind: string, idx: string) => {
              const rgb = exact.get(Number(idx));
              return rgb ? `${pre}${kind};2;${rgb}` : m;
            })}m`;
          })
        : text,
    );
}
