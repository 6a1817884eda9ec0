import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { extname } from "node:path";
import type { ChatEvent, ChatSendResult, StoredMessage, TokenUsage } from "../../shared/protocol/chat.js";
import { homePaths } from "../../shared/paths.js";
import { parse as parseYaml } from "yaml";
import { parseDotenv } from "../../shared/config/dotenv.js";
import { resolveConfig } from "../../shared/config/resolve.js";
import { runTurn } from "./loop.js";
import { OpenAIChatModel } from "./providers/openai-chat.js";
import { resolveProvider } from "./providers/resolve.js";
import { createToolRegistry } from "./tools/index.js";
import { failedEditsFooter } from "./tools/failed-edits.js";

/**
 * The loop outside the daemon, for kanban workers (`AGENT_KANBAN_TASK`): the worker's model
 * calls and tools run in its own process (a crash or a kill takes only the worker down), and
 * the transcript is still written by the daemon alone, through `store`.
 */
export interface TranscriptStore {
  create(input: { cwd: string; profile?: string; title: string }): Promise<string>;
  read(sessionId: string): Promise<StoredMessage[]>;
  append(sessionId: string, messages: StoredMessage[], usage?: TokenUsage): Promise<void>;
}

export interface InProcessTurn {
  home: string;
  prompt: string;
  images: string[];
  sessionId?: string;
  maxTurns?: number;
  provider?: string;
  profile?: string;
  cwd: string;
  signal: AbortSignal;
  onEvent?: (event: ChatEvent) => void;
}

export async function runTurnInProcess(turn: InProcessTurn, store: TranscriptStore): Promise<ChatSendResult> {
  const paths = homePaths(turn.home);
  // Read-only: the daemon alone writes (and migrates) config.yaml.
  const env = { ...parseDotenv(await readFile(paths.env, "utf8").catch(() => "")), ...process.env };
  const config = resolveConfig((parseYaml(await readFile(paths.config, "utf8").catch(() => "")) ?? {}) as Record<string, unknown>, env);
  const provider = resolveProvider(config, env, turn.home, { provider: turn.provider });
  const model = new OpenAIChatModel(provider, null);
  const sessionId = turn.sessionId ?? (await store.create({ cwd: turn.cwd, profile: turn.profile, title: turn.prompt.split("\n")[0]!.slice(0, 60) }));
  const history = turn.sessionId ? await store.read(sessionId) : [];
  const turnId = `t_${Date.now().toString(36)}${randomBytes(3).toString("hex")}`;
  const images = await Promise.all(turn.images.map(async (p) => `data:image/${extname(p).slice(1).replace("jpg", "jpeg")};base64,${(await readFile(p)).toString("base64")}`));
  const tools = createToolRegistry();
  try {
    const outcome = await runTurn(
      { sessionId, turnId, history, prompt: turn.prompt, images, maxTurns: turn.maxTurns ?? config.agent.max_turns, signal: turn.signal },
      {
        model,
        tools,
        toolContext: { cwd: turn.cwd, sessionId, env },
        step: (_name, fn) => fn(),
        append: (messages) => store.append(sessionId, messages),
        emit: (event) => turn.onEvent?.(event),
        footer: (mutations) => failedEditsFooter(mutations, { config, env: process.env }),
        system: `You are agent, working on a kanban task (${process.env.AGENT_KANBAN_TASK ?? "?"}). The working directory is ${turn.cwd}.`,
      },
    );
    return {
      sessionId,
      turnId,
      answer: outcome.answer,
      footer: outcome.footer,
      stopReason: outcome.stopReason,
      modelCalls: outcome.modelCalls,
      toolCalls: outcome.toolCalls,
      usage: { turn: outcome.usage, session: outcome.usage },
      model: provider.model,
      provider: provider.name,
    };
  } finally {
    await tools.close();
  }
}
