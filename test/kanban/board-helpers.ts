import * as assert from "uvu/assert";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import { type CliResult, runCli, startedHome } from "../helpers/cli.js";

export { waitFor } from "../helpers/wait.js";

export const TOKEN = "kanban-test-token-0123456789";

/** A started daemon on a fresh home (gateway token set, HOME inside it), with CLI and client helpers. */
export async function kanbanHome(extraEnv: NodeJS.ProcessEnv = {}) {
  const h = await startedHome({ AGENT_GATEWAY_TOKEN: TOKEN, ...extraEnv });
  const env: NodeJS.ProcessEnv = { AGENT_GATEWAY_TOKEN: TOKEN, HOME: h.home, AGENT_PROFILE: "", AGENT_KANBAN_TASK: "", AGENT_KANBAN_RUN_ID: "", ...extraEnv };
  const cli = (args: string[], more: NodeJS.ProcessEnv = {}): Promise<CliResult> => runCli(args, { home: h.home, env: { ...env, ...more } });
  /** Run a command that must succeed with --json; its parsed output. */
  const json = async (args: string[], more: NodeJS.ProcessEnv = {}): Promise<any> => {
    const r = await cli([...args, "--json"], more);
    assert.is(r.code, 0, `agent ${args.join(" ")}: ${r.stderr}${r.stdout}`);
    return JSON.parse(r.stdout);
  };
  const clients: DaemonClient[] = [];
  const client = async () => {
    const c = await connectDaemon({ home: h.home });
    clients.push(c);
    return c;
  };
  /** Create a task; its id. */
  const create = async (title: string, ...args: string[]): Promise<string> => (await json(["kanban", "create", title, ...args])).task.id;
  const show = async (id: string) => (await json(["kanban", "show", id])).task;
  const status = async (id: string): Promise<string> => (await show(id)).status;
  return {
    home: h.home,
    pid: h.pid,
    env,
    cli,
    json,
    client,
    create,
    show,
    status,
    dispose: async () => {
      for (const c of clients) c.close();
      await h.dispose();
    },
  };
}

export type KanbanHome = Awaited<ReturnType<typeof kanbanHome>>;
