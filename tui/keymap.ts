import type { Key } from "./widgets/input.js";
import type { KeyHelp, ViewId } from "./views/view.js";

/** The views in tab order, with the keys that open them. */
export const VIEW_ORDER: ReadonlyArray<{ id: ViewId; title: string; fkey: string; digit: string }> = [
  { id: "chat", title: "Chat", fkey: "f2", digit: "1" },
  { id: "sessions", title: "Sessions", fkey: "f3", digit: "2" },
  { id: "kanban", title: "Kanban", fkey: "f4", digit: "3" },
  { id: "actors", title: "Actors", fkey: "f5", digit: "4" },
  { id: "logs", title: "Logs", fkey: "f6", digit: "5" },
  { id: "profiles", title: "Profiles", fkey: "f7", digit: "6" },
  { id: "channels", title: "Channels", fkey: "f8", digit: "7" },
];

export type GlobalAction = "palette" | "help" | "sidebar" | "redraw" | "next-view" | "prev-view" | { view: ViewId };

/** Keys that work everywhere (also while typing). */
export const GLOBAL_KEYS: KeyHelp[] = [
  { keys: "F1, ? (not while typing)", does: "this list of keys" },
  { keys: "Ctrl-P", does: "command palette: every view and action by name" },
  { keys: "F2…F7, Alt-1…Alt-6", does: "Chat, Sessions, Kanban, Actors, Logs, Profiles (1…6 also, when not typing)" },
  { keys: "Ctrl-→ / Ctrl-←, Alt-→ / Alt-←", does: "next / previous view" },
  { keys: "Ctrl-B", does: "show or hide the sidebar" },
  { keys: "Ctrl-L", does: "redraw the screen" },
  { keys: "Ctrl-C", does: "interrupt or cancel; twice on an empty input: quit" },
  { keys: "Ctrl-D", does: "quit (on an empty input)" },
];

/** The global action of a key, if it has one. */
export function globalAction(ch: string | undefined, key: Key, typing: boolean): GlobalAction | null {
  const full = key.full ?? key.name ?? "";
  if (full === "C-p") return "palette";
  if (key.name === "f1" || (!typing && ch === "?")) return "help";
  if (full === "C-b") return "sidebar";
  if (full === "C-l") return "redraw";
  if ((key.ctrl || key.meta) && key.name === "right") return "next-view";
  if ((key.ctrl || key.meta) && key.name === "left") return "prev-view";
  for (const v of VIEW_ORDER) {
    if (key.name === v.fkey) return { view: v.id };
    if (key.meta && (ch === v.digit || key.name === v.digit)) return { view: v.id };
    if (!typing && !key.ctrl && !key.meta && ch === v.digit) return { view: v.id };
  }
  return null;
}
