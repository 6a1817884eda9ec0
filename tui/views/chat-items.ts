import { fg } from "../theme.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { terminalText } from "../../shared/terminal-text.js";
import { contentText } from "../../shared/message-text.js";
import { twoColumns } from "../columns.js";
import { renderMarkdown } from "../markdown.js";
import { highlightCode, languageOfPath } from "../highlight.js";
import { esc, type Run, textWidth, truncate, wrapRuns } from "../text.js";
import type { LogItem } from "../widgets/virtual-log.js";
import { readableToolText } from "./tool-render.js";

/**
 * The entries of the chat transcript. Every text that came from a model, a tool or the daemon
 * goes through terminalText before it is stored here, so nothing rendered can drive the terminal.
 */

const MARGIN = "  ";
const mark = (selected: boolean) => (selected ? `${fg("warn")}›{/} ` : MARGIN);

function withMargin(lines: string[], selected: boolean): string[] {
  return lines.map((l, i) => (i === 0 ? mark(selected) : MARGIN) + l);
}

export class UserItem implements LogItem {
  version = 0;
  constructor(readonly text: string) {}
  render(width: number, selected: boolean): string[] {
    const lines = wrapRuns([{ text: this.text, style: "" }], width, { first: `${fg("ok")}{bold}❯{/} `, rest: "  ", firstWidth: 2, restWidth: 2 });
    if (selected) lines[0] = `${fg("warn")}›{/}${lines[0]!.slice(lines[0]!.indexOf("{/}") + 3)}`;
    return ["", ...lines];
  }
}

export class AssistantItem implements LogItem {
  version = 0;
  text = "";
  append(delta: string): void {
    this.text += delta;
    this.version++;
  }
  render(width: number, selected: boolean): string[] {
    if (!this.text.trim()) return [];
    return ["", ...withMargin(renderMarkdown(this.text, width - MARGIN.length), selected)];
  }
}

export interface ToolResult {
  ok: boolean;
  durationMs: number | null;
  preview: string;
}

/** A tool call: one compact row, expanded to its arguments and result on demand. */
export class ToolItem implements LogItem {
  version = 0;
  expanded = false;
  result: ToolResult | null = null;
  readonly argsText: string;
  constructor(
    readonly id: string,
    readonly name: string,
    args: unknown,
  ) {
    let text: string;
    try {
      text = typeof args === "string" ? args : JSON.stringify(args);
    } catch {
      text = String(args);
    }
    this.argsText = terminalText(text ?? "");
  }
  /** The tool's latest progress line while it runs (a queued video job). */
  progress: string | null = null;
  setProgress(text: string): void {
    this.progress = terminalText(text).replace(/\s+/g, " ").slice(0, 200);
    this.version++;
  }
  setResult(result: ToolResult): void {
    this.result = { ...result, preview: terminalText(result.preview) };
    this.version++;
  }
  toggle(): void {
    this.expanded = !this.expanded;
    this.version++;
  }
  render(width: number, selected: boolean): string[] {
    const running = this.progress ? `… ${this.progress}` : "… running";
    const status = !this.result
      ? `${fg("warn")}${esc(running)}{/}`
      : this.result.ok
        ? `${fg("ok")}✓{/}${this.result.durationMs === null ? "" : ` ${fg("muted")}${Math.round(this.result.durationMs)} ms{/}`}`
        : `${fg("error")}✗ failed{/}${this.result.durationMs === null ? "" : ` ${fg("muted")}${Math.round(this.result.durationMs)} ms{/}`}`;
    const statusText = !this.result
      ? running
      : this.result.ok
        ? `✓${this.result.durationMs === null ? "" : ` ${Math.round(this.result.durationMs)} ms`}`
        : `✗ failed${this.result.durationMs === null ? "" : ` ${Math.round(this.result.durationMs)} ms`}`;
    const arrow = this.expanded ? "▾" : "▸";
    // The status (with the tool's timing) always shows: the arguments give way first, then the
    // tool's name.
    const fixed = MARGIN.length + 4 + 2 + textWidth(statusText);
    const name = truncate(this.name, Math.max(4, width - fixed - 1));
    const room = Math.max(0, width - fixed - textWidth(name) - 1);
    const args = truncate(oneLine(this.argsText), room);
    const lines = [`${mark(selected)}${fg("muted")}${arrow}{/} ${fg("special")}⚙ ${esc(name)}{/}${args ? ` ${fg("muted")}${esc(args)}{/}` : ""}  ${status}`];
    const pre = { first: `    ${fg("muted")}│{/} `, rest: `    ${fg("muted")}│{/} `, firstWidth: 6, restWidth: 6 };
    const runLines = (body: Run[][]) => body.flatMap((l) => wrapRuns([{ text: "  ", style: "" }, ...l], width, pre));
    const block = (title: string, body: Run[][]) => [...wrapRuns([{ text: title, style: "{bold}" }], width, pre), ...runLines(body)];
    // A write or a patch reads as the coloured diff it makes: its first lines under the row, all of it expanded.
    const diff = this.diff();
    if (diff && !this.expanded) {
      const shown = diff.slice(0, DIFF_PREVIEW_LINES);
      lines.push(...runLines(shown));
      if (diff.length > shown.length)
        lines.push(...wrapRuns([{ text: `  … ${diff.length - shown.length} more lines (Enter in select mode expands)`, style: fg("muted") }], width, pre));
    }
    if (this.expanded) {
      if (diff) lines.push(...block("diff", diff));
      else lines.push(...block("arguments", highlighted(readableToolText(this.argsText), "yaml")));
      if (this.result) {
        const text = readableToolText(this.result.preview, this.name);
        const path = this.name === "read_file" ? this.path() : null;
        lines.push(...block("result", highlighted(text, path ? languageOfPath(path) : this.name === "terminal" ? null : "yaml")));
      }
    }
    return lines;
  }

  private parsedArgs(): Record<string, unknown> | null {
    try {
      const v = JSON.parse(this.argsText) as unknown;
      return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
    } catch {
      return null;
    }
  }

  private path(): string | null {
    const p = this.parsedArgs()?.path;
    return typeof p === "string" ? p : null;
  }

  private diffCache: Run[][] | null | undefined;
  /** write_file and patch as a unified diff of their arguments (the new content, the replaced text). */
  private diff(): Run[][] | null {
    if (this.diffCache !== undefined) return this.diffCache;
    const a = this.name === "write_file" || this.name === "patch" ? this.parsedArgs() : null;
    let text: string | null = null;
    if (a && typeof a.path === "string") {
      const lines = (s: unknown, mark: string) =>
        typeof s === "string" && s !== ""
          ? s
              .replace(/\n$/, "")
              .split("\n")
              .map((l) => mark + l)
          : [];
      if (this.name === "write_file" && typeof a.content === "string") {
        const added = lines(a.content, "+");
        text = [`--- ${a.path}`, `+++ ${a.path}`, `@@ -0,0 +1,${added.length} @@`, ...added].join("\n");
      } else if (this.name === "patch" && typeof a.search === "string") {
        const del = lines(a.search, "-");
        const add = lines(a.replace, "+");
        text = [`--- ${a.path}`, `+++ ${a.path}`, `@@ -${del.length} +${add.length} @@`, ...del, ...add].join("\n");
      }
    }
    this.diffCache = text === null ? null : (highlightCode(text, "diff") ?? text.split("\n").map((l) => [{ text: l, style: "" }]));
    return this.diffCache;
  }
}

export class NoteItem implements LogItem {
  version = 0;
  constructor(
    readonly text: string,
    readonly level: "info" | "error" | "ok" = "info",
  ) {}
  render(width: number, selected: boolean): string[] {
    const style = this.level === "error" ? `${fg("error")}` : this.level === "ok" ? `${fg("ok")}` : `${fg("muted")}`;
    return withMargin(wrapRuns([{ text: this.text, style }], width - MARGIN.length), selected);
  }
}

/** A two-column table (the /help list): the columns line up at every width. */
export class ColumnsItem implements LogItem {
  version = 0;
  constructor(
    readonly title: string,
    readonly rows: ReadonlyArray<readonly [string, string]>,
    readonly notes: string[] = [],
  ) {}
  render(width: number, selected: boolean): string[] {
    const w = width - MARGIN.length;
    return withMargin(
      [
        ...wrapRuns([{ text: this.title, style: "{bold}" }], w),
        ...twoColumns(this.rows, w, { leftStyle: `${fg("accent")}`, maxLeft: 28 }),
        ...this.notes.flatMap((n) => wrapRuns([{ text: n, style: `${fg("muted")}` }], w)),
      ],
      selected,
    );
  }
}

/** The panel shown when no model is configured: what to add, not an error. */
export class SetupPanel implements LogItem {
  version = 0;
  constructor(readonly problem: string) {}
  render(width: number): string[] {
    const w = Math.min(width - 2, 76);
    const body = [
      { text: "No model is configured yet", style: `{bold}${fg("warn")}` },
      { text: "\n\n", style: "" },
      { text: "Press s to set one up here", style: "{bold}" },
      { text: " (a provider preset, the key, a model from its list, a test call), or run `agent setup` in a shell.\n\n", style: "" },
      { text: terminalText(this.problem), style: "" },
      { text: "\n\nEvery other view works without a model (F1 lists the keys).", style: `${fg("muted")}` },
    ];
    const inner = wrapRuns(body, w - 4);
    const top = `${fg("warn")}┌${"─".repeat(w - 2)}┐{/}`;
    const bottom = `${fg("warn")}└${"─".repeat(w - 2)}┘{/}`;
    // Each line padded to the box's inside, so the right border stands in one column.
    const side = (line: string) => {
      // A wrapped line may end in the space after its last word: that space is not room it takes.
      const l = taggedWidth(line) > w - 4 ? line.replace(/ +((?:\{[^{}]*\})*)$/, "$1") : line;
      return `${fg("warn")}│{/} ${l}${" ".repeat(Math.max(0, w - 4 - taggedWidth(l)))} ${fg("warn")}│{/}`;
    };
    return ["", top, ...inner.map(side), bottom];
  }
}

/** Columns a tagged line takes on the screen (its tags take none; escaped braces one). */
function taggedWidth(line: string): number {
  return textWidth(line.replace(/\{(open|close)\}/g, "_").replace(/\{[^{}]*\}/g, ""));
}

const DIFF_PREVIEW_LINES = 8;

/** Readable lines highlighted as `lang` (plain when unknown or without colour). */
function highlighted(lines: string[], lang: string | null): Run[][] {
  const runs = lang ? highlightCode(lines.join("\n"), lang) : null;
  return runs ?? lines.map((l) => [{ text: l, style: "" }]);
}

function oneLine(s: string): string {
  return s.replace(/\s+/g, " ");
}

/** Stored transcript messages as items; tool results are matched to their calls by id. */
export function itemsFromMessages(messages: StoredMessage[], tools = new Map<string, ToolItem>()): LogItem[] {
  const items: LogItem[] = [];
  for (const m of messages) {
    if (m.role === "system") continue;
    if (m.role === "user") items.push(new UserItem(terminalText(contentText(m.content, "\n"))));
    else if (m.role === "assistant") {
      const text = contentText(m.content, "\n");
      if (text.trim()) {
        const a = new AssistantItem();
        a.append(terminalText(text));
        items.push(a);
      }
      for (const call of m.tool_calls ?? []) {
        const t = new ToolItem(call.id, call.function.name, call.function.arguments);
        tools.set(call.id, t);
        items.push(t);
      }
    } else if (m.role === "tool") {
      const text = m.multimodal?.text_summary ?? contentText(m.content, "\n");
      const t = m.tool_call_id ? tools.get(m.tool_call_id) : undefined;
      const ok = !/^\s*\{\s*"ok"\s*:\s*false/.test(text) && !/"error"\s*:/.test(text.slice(0, 200));
      if (t) t.setResult({ ok, durationMs: null, preview: text.slice(0, 4000) });
    }
  }
  return items;
}
