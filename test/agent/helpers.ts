import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCli, tempHome, type CliResult } from "../helpers/cli.js";
import { startFakeModel, type FakeModel, type FakeModelOptions } from "../fixtures/fake-model-server.js";

/** A temp home configured to talk to a fresh fake model server; dispose stops both. */
export async function chatHome(options: FakeModelOptions = {}, extraConfig = "") {
  const fake = await startFakeModel(options);
  const { home, cleanup } = tempHome("ac");
  writeFileSync(join(home, "config.yaml"), `_config_version: 13\nmodel:\n  base_url: ${fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\n${extraConfig}`);
  const env: NodeJS.ProcessEnv = { AGENT_GATEWAY_PORT: "0" };
  return {
    home,
    fake,
    env,
    chat: (args: string[], opts: { env?: NodeJS.ProcessEnv; input?: string; timeoutMs?: number } = {}): Promise<CliResult> =>
      runCli(["chat", ...args], { home, env: { ...env, ...opts.env }, input: opts.input, timeoutMs: opts.timeoutMs }),
    cli: (args: string[], opts: { env?: NodeJS.ProcessEnv } = {}) => runCli(args, { home, env: { ...env, ...opts.env } }),
    spawnChat: (args: string[]): ChildProcessWithoutNullStreams =>
      spawn(process.execPath, [CLI, "chat", ...args], { env: { ...process.env, ...env, AGENT_HOME: home, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] }),
    dispose: async () => {
      await runCli(["daemon", "stop"], { home }).catch(() => undefined);
      await fake.close();
      cleanup();
    },
  };
}

export async function waitFor(cond: () => boolean, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The tool messages the model received in request `i`. */
export function toolMessages(fake: FakeModel, i: number): Array<{ tool_call_id: string; content: string }> {
  return (fake.requests[i]?.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
}
