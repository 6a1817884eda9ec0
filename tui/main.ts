import { AgentError } from "../shared/errors.js";

export interface TuiOptions {
  home: string;
  dev?: boolean;
  /** The command line after `agent` (for `--resume <session>`). */
  argv?: string[];
}

/**
 * `agent --tui`: the full-screen terminal UI. It starts the daemon if needed and talks to it only
 * through the shared socket client. `--resume <session>` opens a session; `--dev` shows the RPC
 * traffic.
 */
export async function runTui(options: TuiOptions): Promise<number> {
  const argv = options.argv ?? [];
  const i = argv.indexOf("--resume");
  const resume = i >= 0 ? argv[i + 1] : argv.find((a) => a.startsWith("--resume="))?.slice("--resume=".length);
  if (i >= 0 && (!resume || resume.startsWith("-"))) throw new AgentError("usage.missing_value", "--resume needs a session id (agent chat --list shows them)");
  if (!process.stdout.isTTY) throw new AgentError("usage.invalid", "agent --tui needs a terminal; use `agent chat` for line mode");
  // Connect while the UI's modules load: the two are most of the time to the first frame.
  const { connectDaemon } = await import("../shared/client/index.js");
  const connecting = connectDaemon({ home: options.home, autostart: true });
  connecting.catch(() => undefined);
  // The terminal's background (for `display.theme = auto`) is asked while the UI's modules load.
  const { askTerminalBackground } = await import("./terminal.js");
  const background = process.env.COLORFGBG ? Promise.resolve("") : askTerminalBackground();
  const { App } = await import("./app.js");
  const app = new App({ home: options.home, dev: Boolean(options.dev), connecting, background: await background, ...(resume ? { resume } : {}) });
  await app.start();
  return app.exited;
}
