/**
 * Which terminal description blessed should use. blessed reads terminfo itself and cannot parse
 * the entries of tmux and screen that current ncurses ships (tmux-256color, screen-256color): it
 * falls back to plain xterm with 8 colors, where gray is drawn as black and borders, code gutters
 * and links vanish on a dark background. tmux and screen speak xterm's color sequences, so under
 * them, when the terminal says it has 256 colors (the `-256color` suffix, or COLORTERM set), the
 * TUI uses xterm-256color's description. Any other terminal keeps its own.
 */
export function blessedTerminal(env: NodeJS.ProcessEnv = process.env): string | undefined {
  const term = (env.TERM ?? "").trim();
  if (!/^(tmux|screen)([.-]|$)/.test(term)) return undefined;
  const colorterm = (env.COLORTERM ?? "").trim().toLowerCase();
  if (/-256colou?r$/.test(term) || /^(truecolor|24bit|256|256colou?r|yes|1)$/.test(colorterm) || /-(direct|truecolor)$/.test(term)) return "xterm-256color";
  return undefined;
}

/**
 * Ask the terminal for its background colour (OSC 11), followed by a device-attributes query
 * (DA1) that every terminal answers: the DA1 answer arriving first means no OSC 11 answer is
 * coming, so the wait is one round trip, not a guessed delay (`timeoutMs` only for a terminal
 * that answers neither). The raw answer text, or "" when there is none. Runs before blessed owns
 * stdin, and gives stdin back as it found it.
 */
export function askTerminalBackground(timeoutMs = 250): Promise<string> {
  const stdin = process.stdin;
  if (!stdin.isTTY || !process.stdout.isTTY || typeof stdin.setRawMode !== "function") return Promise.resolve("");
  return new Promise((resolve) => {
    let got = "";
    const wasRaw = stdin.isRaw;
    const done = () => {
      clearTimeout(timer);
      stdin.off("data", onData);
      stdin.setRawMode(wasRaw);
      stdin.pause();
      resolve(/\x1b\]11;[^\x07\x1b]*/.exec(got)?.[0] ?? "");
    };
    const onData = (chunk: Buffer) => {
      got += chunk.toString("latin1");
      // The DA1 answer (ESC [ ? … c) comes after any OSC 11 answer.
      if (/\x1b\[\?[0-9;]*c/.test(got)) done();
    };
    const timer = setTimeout(done, timeoutMs);
    stdin.setRawMode(true);
    stdin.on("data", onData);
    stdin.resume();
    process.stdout.write("\x1b]11;?\x1b\\\x1b[c");
  });
}
