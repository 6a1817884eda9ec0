import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, launchDaemon, runCli, tempHome, type CliResult } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

/**
 * A real daemon on a temp home with the given actor modules; the gateway on a free port. With
 * `start: false` the daemon is not started yet (the test prepares the home first, then `start()`).
 */
export async function actorHome(modules: Record<string, string> = {}, options: { start?: boolean } = {}) {
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
    /** kill -9 the daemon, wait until it is gone, and start it again on the same home. */
    async killAndRestart() {
      const was = pid;
      killQuietly(was);
      await waitFor("the killed daemon to exit", () => !processAlive(was), 10_000);
      await h.start();
    },
    /** PUT /actors (get-or-create); resolves with the actor's id. */
    async createActor(name: string, key: string, crashPolicy = "sleep"): Promise<string> {
      const r = await fetch(`${url}/actors`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ name, key, runner_name_selector: "default", crash_policy: crashPolicy }),
      });
      const body = (await r.json()) as any;
      if (r.status !== 200) throw new Error(`PUT /actors ${name}/${key}: ${r.status} ${JSON.stringify(body)}`);
      return body.actor.actor_id;
    },
    /** An action through the gateway; resolves with its output (a non-200 answer fails the test). */
    async action(id: string, name: string, args: unknown[] = []): Promise<unknown> {
      const r = await fetch(`${url}/gateway/${id}/action/${name}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ args }),
      });
      const body = (await r.json()) as any;
      if (r.status !== 200) throw new Error(`action ${name}: ${r.status} ${JSON.stringify(body)}`);
      return body.output;
    },
    async dispose() {
      await h.stop();
      h.kill();
      cleanup();
    },
  };
  if (options.start !== false) await h.start();
  return h;
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

export { waitFor };
