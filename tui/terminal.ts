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
