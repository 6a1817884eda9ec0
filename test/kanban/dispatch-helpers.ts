// A real daemon on a temp home whose kanban workers (real `agent chat` processes started by the
// dispatcher) talk to one fake model server; each task's worker follows a scripted behaviour.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import type { Params, Result } from "../../shared/protocol/index.js";
import type { Task } from "../../shared/protocol/kanban.js";
import { startFakeModel, type FakeModel, type RecordedRequest, type Scripted } from "../fixtures/fake-model-server.js";
import { runCli, tempHome, type CliResult } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

/** What a worker's model answers on step `step` (0 = the run's first model call) of its `run`-th run. */
export type Behaviour = (step: number) => Scripted;

export const completes =
  (summary = "done by the worker"): Behaviour =>
  (step) =>
    step === 0 ? { toolCalls: [{ name: "kanban_complete", arguments: { summary, result: "42" } }] } : { text: "finished" };
export const blocks =
  (reason: string): Behaviour =>
  (step) =>
    step === 0 ? { toolCalls: [{ name: "kanban_block", arguments: { reason } }] } : { text: "blocked it" };
/** The worker's own process is killed (SIGKILL) from inside a tool call: a crash. */
export const crashes: Behaviour = (step) =>
  step === 0 ? { toolCalls: [{ name: "terminal", arguments: { command: "kill -9 $PPID; sleep 5" } }] } : { text: "?" };
/** Answers without completing or blocking: exit 0 with the task still running. */
export const forgets: Behaviour = () => ({ text: "I looked at it." });
/** Rate limited (with model.max_retries 0 the worker exits 75). */
export const rateLimited: Behaviour = () => ({ status: 429, retryAfter: 0 });
/** The model never answers: the worker runs until it is killed. */
export const hangs: Behaviour = () => ({ stall: true });

const TASK_IN_PROMPT = /work kanban task (t_[0-9a-f]{8})/;

function textOf(m: any): string {
  if (!m) return "";
  return typeof m.content === "string" ? m.content : (m.content ?? []).map((p: any) => p.text ?? "").join("");
}

export interface KanbanHome {
  home: string;
  fake: FakeModel;
  client: DaemonClient;
  /** Runs of each task's worker, one behaviour per run (the last one repeats). */
  behave(taskId: string, runs: Behaviour[]): void;
  /** The decomposer's answer (raw text) for the next decompositions. */
  decomposerReplies: string[];
  /** Answers to model calls that are neither a worker's nor the decomposer's (chat sessions). */
  chatReplies: Scripted[];
  call<M extends Parameters<DaemonClient["call"]>[0]>(method: M, params: Params<M>): Promise<Result<M>>;
  cli(args: string[]): Promise<CliResult>;
  /** Create a task held in triage, script its worker, then promote it so the dispatcher takes it. */
  task(title: string, runs: Behaviour[], options?: Omit<Params<"kanban.create">, "title" | "triage">): Promise<Task>;
  show(id: string): Promise<Task>;
  waitTask(what: string, id: string, check: (t: Task) => boolean, timeoutMs?: number): Promise<Task>;
  /** The model requests of a task's workers. */
  requestsOf(taskId: string): RecordedRequest[];
  dispose(): Promise<void>;
}

/** `daemonEnv` is added to the daemon's environment (its workers inherit it). */
export async function kanbanHome(kanbanConfig: Record<string, unknown> = {}, extraConfig = "", daemonEnv: NodeJS.ProcessEnv = {}): Promise<KanbanHome> {
  const behaviours = new Map<string, Behaviour[]>();
  const runCount = new Map<string, number>();
  const decomposerReplies: string[] = [];
  const chatReplies: Scripted[] = [];
  const fake = await startFakeModel({
    respond(req) {
      const messages: any[] = req.body?.messages ?? [];
      if (textOf(messages[0]).startsWith("You plan work on a kanban board"))
        return { text: decomposerReplies.shift() ?? '{"fanout": false, "title": "t", "body": ""}' };
      const match = TASK_IN_PROMPT.exec(textOf(messages.find((m) => m.role === "user")));
      if (!match) return chatReplies.shift() ?? { text: "ok" };
      const id = match[1]!;
      const step = messages.filter((m) => m.role === "assistant").length;
      if (step === 0) runCount.set(id, (runCount.get(id) ?? -1) + 1);
      const runs = behaviours.get(id) ?? [completes()];
      const run = runCount.get(id) ?? 0;
      return runs[Math.min(run, runs.length - 1)]!(step);
    },
  });
  const { home, cleanup } = tempHome("kd");
  const kanban = { dispatch_interval_seconds: 1, auto_decompose: false, ...kanbanConfig };
  const kanbanYaml = Object.entries(kanban)
    .map(([k, v]) => `  ${k}: ${JSON.stringify(v)}`)
    .join("\n");
  writeFileSync(
    join(home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: ${fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\n  max_retries: 0\nkanban:\n${kanbanYaml}\n${extraConfig}`,
  );
  const env = { AGENT_GATEWAY_PORT: "0", AGENT_DEFAULT_WORKSPACE: "dir", ...daemonEnv };
  const started = await runCli(["daemon", "start"], { home, env });
  if (started.code !== 0) throw new Error(`daemon start failed: ${started.stderr}`);
  let client = await connectDaemon({ home });
  const h: KanbanHome = {
    home,
    fake,
    get client() {
      return client;
    },
    decomposerReplies,
    chatReplies,
    behave(taskId, runs) {
      behaviours.set(taskId, runs);
    },
    call: async (method, params) => {
      try {
        return await client.call(method, params);
      } catch (error) {
        const e = error as { code?: string; message?: string };
        if (e.code !== "daemon.disconnected" && !/disposed|closed/i.test(e.message ?? "")) throw error;
        client = await connectDaemon({ home, autostart: true, env: { ...process.env, ...env } });
        return client.call(method, params);
      }
    },
    cli: (args) => runCli(args, { home, env }),
    async task(title, runs, options = {}) {
      const { task } = await h.call("kanban.create", { title, triage: true, ...options });
      behaviours.set(task.id, runs);
      await h.call("kanban.promote", { ids: [task.id] });
      return task;
    },
    show: async (id) => (await h.call("kanban.show", { id })).task,
    async waitTask(what, id, check, timeoutMs = 30_000) {
      let last: Task | null = null;
      await waitFor(
        () =>
          `${id} ${what}; last seen: ${last ? JSON.stringify({ status: last.status, reason: last.reason, runs: last.runs, events: last.events.map((e) => e.type) }) : "nothing"}`,
        async () => {
          last = await h.show(id);
          return check(last);
        },
        timeoutMs,
      );
      return last!;
    },
    requestsOf: (taskId) =>
      fake.requests.filter((r) => TASK_IN_PROMPT.exec(textOf((r.body?.messages ?? []).find((m: any) => m.role === "user")))?.[1] === taskId),
    async dispose() {
      // Workers outlive the daemon by design; a test kills what it left running.
      const running = await h.call("kanban.list", { status: ["running"] }).catch(() => ({ tasks: [] as Array<{ id: string }> }));
      for (const t of running.tasks) {
        const task = await h.show(t.id).catch(() => null);
        for (const r of task?.runs ?? []) if (r.pgid && r.ended_at === null) killGroup(r.pgid);
      }
      client.close();
      await runCli(["daemon", "stop"], { home }).catch(() => undefined);
      await fake.close();
      cleanup();
    },
  };
  return h;
}

export function killGroup(pgid: number): void {
  try {
    process.kill(-pgid, "SIGKILL");
  } catch {}
}

/** Whether any process of the group is left. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

export const eventTypes = (t: Task): string[] => t.events.map((e) => e.type);

export { waitFor };
