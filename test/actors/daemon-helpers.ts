import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, launchDaemon, runCli, tempHome, type CliResult } from "../helpers/cli.js";

/** A real daemon on a temp home with the given actor modules; the gateway on a free port. */
export async function actorHome(modules: Record<string, string> = {}) {
  const { home, cleanup } = tempHome("act");
  mkdirSync(join(home, "actors"), { recursive: true });
  for (const [file, text] of Object.entries(modules)) writeFileSync(join(home, "actors", file), text);
  const env = { AGENT_GATEWAY_PORT: "0" };
  let pid = 0;
  let url = "";
  const h = {
    home,
    get pid() {
      return pid;
    },
    get url() {
      return url;
    },
    cli: (args: string[]): Promise<CliResult> => runCli(args, { home, env }),
    /** Run and parse `--json` output; fails the test on a non-zero exit. */
    async json<T = any>(args: string[]): Promise<T> {
      const r = await runCli([...args, "--json"], { home, env });
      if (r.code !== 0) throw new Error(`agent ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    },
    async start() {
      ({ pid, url } = await launchDaemon(home, env));
    },
    async stop() {
      await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    },
    kill() {
      killQuietly(pid);
    },
    async dispose() {
      await h.stop();
      h.kill();
      cleanup();
    },
  };
  await h.start();
  return h;
}

export { waitFor } from "../helpers/wait.js";
