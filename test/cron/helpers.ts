import type { CronJob, CronRun } from "../../shared/protocol/cron.js";
import { chatHome, waitFor } from "../agent/helpers.js";
import { rpcConnect } from "../helpers/cli.js";
import type { FakeModelOptions } from "../fixtures/fake-model-server.js";

/**
 * A temp home with a fake model and a running daemon, plus an RPC connection to read the cron
 * table cheaply while a test waits for runs.
 */
export async function cronHome(options: FakeModelOptions = {}, env: NodeJS.ProcessEnv = {}) {
  const h = await chatHome(options);
  Object.assign(h.env, env);
  const started = await h.cli(["daemon", "start"]);
  if (started.code !== 0) throw new Error(`daemon start failed: ${started.stderr}`);
  let conn = await rpcConnect(h.home);
  const self = {
    ...h,
    /** Run `agent cron ...` and parse its --json answer (exit 0 required). */
    async cron<T = any>(args: string[], profile?: string): Promise<T> {
      const r = await h.cli([...(profile ? ["-p", profile] : []), "cron", ...args, "--json"]);
      if (r.code !== 0) throw new Error(`agent cron ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      return JSON.parse(r.stdout) as T;
    },
    /** `agent cron add ...` (as the default profile); the job as the RPC table has it (the CLI's JSON is snake_case). */
    async add(args: string[]): Promise<CronJob> {
      const { id } = (await self.cron<{ job: { id: string } }>(["add", ...args])).job;
      return self.job(id);
    },
    async job(id: string): Promise<CronJob> {
      const { jobs } = (await conn.rpc.sendRequest("cron.list", {})) as { jobs: CronJob[] };
      const job = jobs.find((j) => j.id === id);
      if (!job) throw new Error(`no job ${id}`);
      return job;
    },
    /** Runs of a job, oldest first. */
    async runs(id: string): Promise<CronRun[]> {
      const { runs } = (await conn.rpc.sendRequest("cron.logs", { id, limit: 1000 })) as { runs: CronRun[] };
      return runs.reverse();
    },
    /** Wait until the job has at least `n` runs (skipped entries not counted) and return them all. */
    async waitRuns(id: string, n: number, timeoutMs = 20_000): Promise<CronRun[]> {
      return waitFor(
        `${n} run(s) of ${id}`,
        async () => {
          const runs = await self.runs(id);
          return runs.filter((r) => r.status !== "skipped").length >= n && runs;
        },
        timeoutMs,
      );
    },
    /** Stop the daemon (if it runs) and start it again with `env` added (the connection follows). */
    async restart(extra: NodeJS.ProcessEnv = {}): Promise<void> {
      conn.close();
      const stopped = await h.cli(["daemon", "stop"]);
      // Exit 3: no daemon was running (a test killed it).
      if (stopped.code !== 0 && stopped.code !== 3) throw new Error(`daemon stop failed (${stopped.code}): ${stopped.stderr}`);
      Object.assign(h.env, extra);
      const r = await h.cli(["daemon", "start"]);
      if (r.code !== 0) throw new Error(`daemon start failed: ${r.stderr}`);
      conn = await rpcConnect(h.home);
    },
    async dispose(): Promise<void> {
      conn.close();
      await h.dispose();
    },
  };
  return self;
}

export { waitFor };
