import { connectDaemon } from "../shared/client/index.js";

export interface TuiOptions {
  home: string;
  dev?: boolean;
}

/**
 * The terminal UI. Until the full TUI lands this is a small blessed screen that starts the
 * daemon if needed and shows its live status.
 */
export async function runTui(options: TuiOptions): Promise<number> {
  const client = await connectDaemon({ home: options.home, autostart: true });
  const { default: blessed } = await import("blessed");
  const screen = blessed.screen({ smartCSR: true, title: "agent", fullUnicode: true, forceUnicode: true });
  // Draw borders with the Unicode box glyphs, never the terminal's ACS line set: tmux and many
  // terminals show ACS as "lqqk".
  (screen.tput as unknown as { brokenACS: boolean }).brokenACS = true;
  const box = blessed.box({
    parent: screen,
    top: "center",
    left: "center",
    width: "80%",
    height: 14,
    border: { type: "line" },
    label: " agent ",
    tags: true,
    content: "connecting…",
  });
  const render = async () => {
    try {
      const s = await client.call("daemon.status", {});
      box.setContent(
        [
          `{bold}agentd{/bold} running  pid ${s.pid}  version ${s.version}`,
          `home     ${s.home}`,
          `gateway  ${s.gateway_url ?? "not listening"}`,
          `clients  ${s.connections}`,
          `uptime   ${Math.round(s.uptimeMs / 1000)} s`,
          "",
          ...Object.entries(s.components).map(([n, c]) => `${n.padEnd(8)} ${c.status}${c.detail ? `: ${c.detail}` : ""}`),
          "",
          "{gray-fg}q or Ctrl-C to quit{/gray-fg}",
        ].join("\n"),
      );
    } catch (error) {
      box.setContent(`daemon unavailable: ${(error as Error).message}`);
    }
    screen.render();
  };
  await render();
  const timer = setInterval(() => void render(), 1000);
  return new Promise<number>((resolve) => {
    screen.key(["q", "C-c", "escape"], () => {
      clearInterval(timer);
      screen.destroy();
      client.close();
      resolve(0);
    });
  });
}
