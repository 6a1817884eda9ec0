import { fg } from "../theme.js";
import type blessed from "blessed";
import { esc } from "../text.js";
import { InputEditor, type Key } from "./input.js";
import { frame, type Overlay } from "./overlays.js";
import { describeField, type ElicitField, type ElicitValue, elicitationFields, parseFieldInput } from "../../shared/elicitation.js";
import type { ElicitationAction, PendingElicitation } from "../../shared/protocol/approvals.js";
import { terminalText } from "../../shared/terminal-text.js";

export type ElicitationAnswer = { action: ElicitationAction; content?: Record<string, ElicitValue> };

/**
 * An MCP server's elicitation (docs/mcp.md): its message and form; `a` fills the form one field
 * at a time (Enter takes the default or leaves an optional field out; a bad value is shown and
 * asked again), `d` declines, `c` or Esc cancels. The server's text is cleaned of terminal
 * escapes and blessed tags.
 */
export class ElicitationOverlay implements Overlay {
  readonly el: blessed.Widgets.BoxElement;
  private readonly fields: ElicitField[];
  private readonly content: Record<string, ElicitValue> = {};
  /** The field being filled; -1: choosing answer / decline / cancel. */
  private at = -1;
  private input: InputEditor | null = null;
  private error = "";
  constructor(
    screen: blessed.Widgets.Screen,
    private readonly elicitation: PendingElicitation,
    private readonly done: (answer: ElicitationAnswer | null) => void,
  ) {
    this.el = frame(screen, "Input requested", 0.85, 0.8);
    let fields: ElicitField[] = [];
    try {
      fields = elicitationFields(elicitation.schema);
    } catch {
      // The daemon declines a form it cannot show before asking; nothing to fill here.
    }
    this.fields = fields;
    this.draw();
  }

  private draw(): void {
    const clean = (s: string) => esc(terminalText(s).replace(/\r/g, ""));
    const e = this.elicitation;
    const lines = [`${fg("warn")}? MCP server ${clean(e.server)} asks for input{/}`, "", ...clean(e.message).split("\n"), ""];
    this.fields.forEach((f, i) => {
      const mark = i === this.at ? `${fg("accent")}▸{/}` : " ";
      const value = f.name in this.content ? clean(JSON.stringify(this.content[f.name])) : i < this.at ? `${fg("muted")}(left out){/}` : "";
      lines.push(`${mark} {bold}${clean(f.label)}{/bold}${f.required ? " *" : ""}  ${value}`);
    });
    const width = (this.el.width as number) - 4;
    let footer: string[];
    if (this.at < 0 || !this.input) {
      const seconds = Math.max(0, Math.round((e.expiresAt - Date.now()) / 1000));
      footer = [`{bold}a{/bold} answer · {bold}d{/bold} decline · {bold}c{/bold}/Esc cancel`, `${fg("muted")}declined unanswered in ${seconds} s{/}`];
    } else {
      const f = this.fields[this.at]!;
      const hint = [describeField(f), f.required ? "required" : "optional", f.default !== undefined ? `Enter: ${String(f.default)}` : ""]
        .filter(Boolean)
        .join(", ");
      footer = [
        `${clean(f.label)}${f.description ? ` — ${clean(f.description)}` : ""}`,
        `${fg("muted")}${clean(f.name)} (${clean(hint)}){/}`,
        `> ${this.input.render(width - 2, true).slice(-1)[0] ?? ""}`,
        this.error ? `${fg("error")}${clean(f.name)} ${esc(this.error)}{/}` : `${fg("muted")}Enter next field · Esc back{/}`,
      ];
    }
    const h = Math.max(1, (this.el.height as number) - 2 - footer.length - 1);
    this.el.setContent([...lines.slice(0, h), ...Array(Math.max(0, h - lines.length)).fill(""), "", ...footer].join("\n"));
  }

  private field(i: number): void {
    if (i >= this.fields.length) {
      this.done({ action: "accept", content: this.content });
      return;
    }
    this.at = i;
    this.error = "";
    const input = new InputEditor();
    input.onSubmit = (text) => {
      const f = this.fields[this.at]!;
      const got = parseFieldInput(f, text);
      if (got.error) {
        this.error = got.error;
        this.draw();
        return;
      }
      if (got.value !== undefined) this.content[f.name] = got.value;
      else delete this.content[f.name];
      this.field(this.at + 1);
    };
    input.onChange = () => this.draw();
    this.input = input;
    this.draw();
  }

  handleKey(ch: string | undefined, key: Key): void {
    if (this.input) {
      if (key.name === "escape") {
        this.input = null;
        this.at = -1;
        this.error = "";
      } else if (key.name === "enter" || (key.name === "return" && key.meta)) {
        // One line per field: the Enter that comes with "return", and Alt-Enter, add no line break.
      } else this.input.handleKey(ch, key);
      this.draw();
      return;
    }
    if (ch === "a") this.field(0);
    else if (ch === "d") this.done({ action: "decline" });
    else if (ch === "c" || key.name === "escape") this.done({ action: "cancel" });
  }
}
