import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { CLI, runCli, tempHome, waitFor, type CliResult } from "../helpers/cli.js";
import { startFakeModel, type FakeModel, type FakeModelOptions, type Scripted } from "../fixtures/fake-model-server.js";

/** A temp home configured to talk to a fresh fake model server; dispose stops both. */
export async function chatHome(options: FakeModelOptions = {}, extraConfig = "") {
  const fake = await startFakeModel(options);
  const { home, cleanup } = tempHome("ac");
  // The chat runs in the test's cwd and its tools write under temp dirs, outside that workspace:
  // approvals are off unless the test sets them (test/approvals/ does).
  const approvals = /^approvals:/m.test(extraConfig) ? "" : "approvals:\n  mode: off\n";
  writeFileSync(
    join(home, "config.yaml"),
    `_config_version: 13\nmodel:\n  base_url: ${fake.baseUrl}\n  name: fake-model\n  retry_base_ms: 20\n${extraConfig}${extraConfig && !extraConfig.endsWith("\n") ? "\n" : ""}${approvals}`,
  );
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

export { waitFor } from "../helpers/wait.js";

/** The tool messages the model received in request `i`. */
export function toolMessages(fake: FakeModel, i: number): Array<{ tool_call_id: string; content: string }> {
  return (fake.requests[i]?.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
}

/** A tiny valid PNG (1x1). */
export const PNG_1X1 = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==", "base64");

/** An interactive `agent chat` driven line by line through stdin, its stdout collected with arrival times. */
export function driveChat(h: { home: string; env: NodeJS.ProcessEnv }, args: string[] = [], env: NodeJS.ProcessEnv = {}) {
  const child = spawn(process.execPath, [CLI, "chat", ...args], {
    env: { ...process.env, ...h.env, ...env, AGENT_HOME: h.home, NO_COLOR: "1" },
    stdio: ["pipe", "pipe", "pipe"],
  });
  const chunks: Array<{ at: number; text: string }> = [];
  let out = "";
  let err = "";
  child.stdout.on("data", (d: Buffer) => {
    out += d;
    chunks.push({ at: Date.now(), text: String(d) });
  });
  child.stderr.on("data", (d: Buffer) => (err += d));
  const closed = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    child,
    chunks,
    get out() {
      return out;
    },
    get err() {
      return err;
    },
    send(line: string) {
      child.stdin.write(`${line}\n`);
    },
    /** Wait until stdout (after `from` characters) matches. */
    async expect(re: RegExp, from = 0, timeoutMs = 15_000): Promise<RegExpExecArray> {
      await waitFor(
        () => `${re} in the chat's output:\n${out}\n${err}`,
        () => re.test(out.slice(from)),
        timeoutMs,
      );
      return re.exec(out.slice(from))!;
    },
    /** Close stdin (Ctrl-D) and wait for the exit code. */
    async end(): Promise<number | null> {
      child.stdin.end();
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      try {
        return await closed;
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * One chat home for the tests of a file that need no config or daemon environment of their own:
 * `get(script)` gives it with the fake model's recorded requests cleared and `script` set;
 * `dispose()` (in `test.after`) ends it. Each test names its own files and sessions.
 */
export function sharedChatHome(): { get: (script?: Scripted[]) => Promise<ChatHome>; dispose: () => Promise<void> } {
  let shared: ChatHome | null = null;
  return {
    async get(script: Scripted[] = []) {
      shared ??= await chatHome();
      shared.fake.requests.length = 0;
      shared.fake.setScript(script);
      return shared;
    },
    dispose: async () => {
      await shared?.dispose();
    },
  };
}

export type ChatHome = Awaited<ReturnType<typeof chatHome>>;
