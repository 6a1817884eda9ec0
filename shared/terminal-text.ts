const State = { Text: 0, Escape: 1, EscapeIntermediate: 2, Csi: 3, String: 4, StringEscape: 5 } as const;
type State = (typeof State)[keyof typeof State];

const ESC = 0x1b;
const BEL = 0x07;
const LF = 0x0a;
const CR = 0x0d;
const TAB = 0x09;
/** After ESC: `]` OSC, `P` DCS, `X` SOS, `^` PM, `_` APC, each a string up to ST or BEL. */
const STRING_INTRODUCERS = new Set([0x5d, 0x50, 0x58, 0x5e, 0x5f]);
/** Their 8-bit forms: DCS, SOS, OSC, PM, APC. */
const STRING_C1 = new Set([0x90, 0x98, 0x9d, 0x9e, 0x9f]);

/**
 * Text that a model, a tool, a file or another process produced, made safe to print on a
 * terminal: it can no longer drive the terminal (write the clipboard with OSC 52, set the title,
 * clear the screen, move the cursor, reset or reconfigure the terminal).
 *
 * Removed: every escape sequence (CSI `ESC [`, OSC `ESC ]`, DCS/SOS/PM/APC strings up to their
 * terminator, two-character escapes such as `ESC c` or `ESC 7`, charset selections such as
 * `ESC ( B`), a bare ESC, the C1 controls U+0080–U+009F (8-bit CSI, OSC, ST…), DEL, and every
 * other C0 control except newline and tab. A carriage return becomes a newline (`\r\n` stays one
 * newline): a bare `\r` would let text overwrite what was printed before it on the line.
 * An escape string (OSC and the like) that never ends is cut at the next newline, so a stray
 * `ESC ]` cannot swallow the rest of an answer.
 *
 * The client's own colours are applied after this, to text that went through it.
 */
export function terminalText(text: string): string {
  const filter = new TerminalTextFilter();
  return filter.push(text) + filter.end();
}

/** `terminalText` for a stream (deltas): a sequence split across chunks is still removed whole. */
export class TerminalTextFilter {
  private state: State = State.Text;
  private pendingCR = false;

  push(chunk: string): string {
    let out = "";
    for (let i = 0; i < chunk.length; i++) {
      const c = chunk.charCodeAt(i);
      if (this.pendingCR) {
        this.pendingCR = false;
        out += "\n";
        if (c === LF) continue;
      }
      switch (this.state) {
        case State.Text:
          if (c === ESC) this.state = State.Escape;
          else if (c === CR) this.pendingCR = true;
          else if (c >= 0x80 && c <= 0x9f) this.state = c === 0x9b ? State.Csi : STRING_C1.has(c) ? State.String : State.Text;
          else if ((c >= 0x20 && c !== 0x7f) || c === LF || c === TAB) out += chunk[i];
          break;
        case State.Escape:
          if (c === 0x5b /* [ */) this.state = State.Csi;
          else if (STRING_INTRODUCERS.has(c)) this.state = State.String;
          else if (c >= 0x20 && c <= 0x2f) this.state = State.EscapeIntermediate;
          else if (c >= 0x30 && c <= 0x7e) this.state = State.Text;
          else {
            // Not an escape after all: drop the ESC, keep what follows.
            this.state = State.Text;
            i--;
          }
          break;
        case State.Csi:
          if (c >= 0x40 && c <= 0x7e) this.state = State.Text;
          else if (c < 0x20 || c > 0x3f) {
            this.state = State.Text;
            i--;
          }
          break;
        case State.EscapeIntermediate:
          if (c >= 0x30 && c <= 0x7e) this.state = State.Text;
          else if (c < 0x20 || c > 0x2f) {
            this.state = State.Text;
            i--;
          }
          break;
        case State.String:
          if (c === BEL || c === 0x9c) this.state = State.Text;
          else if (c === ESC) this.state = State.StringEscape;
          else if (c === LF || c === CR) {
            this.state = State.Text;
            i--;
          }
          break;
        case State.StringEscape:
          // ESC \ is the string terminator; any other ESC starts a new sequence.
          this.state = c === 0x5c ? State.Text : State.Escape;
          if (c !== 0x5c) i--;
          break;
      }
    }
    return out;
  }

  /** The end of the stream: a held carriage return becomes its newline; an open sequence is dropped. */
  end(): string {
    this.state = State.Text;
    const out = this.pendingCR ? "\n" : "";
    this.pendingCR = false;
    return out;
  }
}

/**
 * JSON for a terminal: JSON.stringify escapes C0 controls but not the C1 range, which some
 * terminals act on (U+009B is CSI); those are written as \u escapes, which is still valid JSON.
 */
export function terminalJson(value: unknown, indent?: number): string {
  return JSON.stringify(value, null, indent).replace(/[\u0080-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
