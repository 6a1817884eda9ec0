import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { createInterface, type Interface } from "node:readline";
import { fileURLToPath } from "node:url";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ChatEvent, ChatSendResult } from "../../shared/protocol/chat.js";
import type { Result } from "../../shared/protocol/index.js";
import { CODER_RUNTIME_ARGS, coderRuntimeText, completeSlash, parseSlash, renderQuota, type SlashHandlerId, slashHelp } from "../../shared/slash-commands.js";
import { terminalJson, terminalText, TerminalTextFilter } from "../../shared/terminal-text.js";
import { listText } from "./mcp.js";
import { parseCommand } from "../args.js";
import { execNode } from "../exec-node.js";
import { connectDaemon, type DaemonClient } from "../../shared/client/index.js";
import { stopDaemonAndWait } from "../../shared/client/daemon-process.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult, snakeKeys, table } from "../output.js";
import type { PendingApproval } from "../../shared/protocol/approvals.js";
import { askApproval } from "../approval-prompt.js";
import { askElicitation } from "../elicitation-prompt.js";
import type { PendingElicitation } from "../../shared/protocol/approvals.js";
import type { MarkdownStream } from "../../tui/markdown-ansi.js";
import { envValue } from "../../shared/config/env.js";

const SPEC = {
  usage: "agent chat [-q <prompt>] [options]",
  description: "Talk to the agent: an interactive line mode, or one prompt with -q.",
  flags: {
    query: { type: "string", shortFlag: "q" },
    image: { type: "string", isMultiple: true },
    maxTurns: { type: "number" },
    provider: { type: "string" },
    profile: { type: "string" },
    resume: { type: "string" },
    list: { type: "boolean" },
    yolo: { type: "boolean" },
  },
  help: `Options
  -q, --query <prompt>   one prompt: print the final answer and exit (0 on success)
  --image <path>         attach an image (repeatable)
  --max-turns <n>        limit model calls in a turn (default agent.max_turns, 90)
  --provider <name>      use providers.<name> from config.yaml
  --profile <name>       run as this profile
  --resume <session>     continue a session
  --list                 list sessions
  --yolo                 approvals off for this session: risky tool calls run unasked

Inside the chat, /help lists the slash commands.`,
} as const;

interface Options {
  maxTurns?: number;
  provider?: string;
  profile?: string;
  yolo?: boolean;
}

/**
 * Answers a turn's approval questions on the terminal (docs/approvals.md): each
 * `approval_request` is asked on the readline interface, the answer sent with
 * `approvals.answer`; a question answered elsewhere or timed out is dropped.
 */
class ApprovalAsker {
  private readonly open = new Map<string, AbortController>();

  constructor(
    private readonly client: () => DaemonClient | null,
    private readonly rl: () => Interface,
    private readonly write: (text: string) => void,
  ) {}

  onEvent(ev: ChatEvent): void {
    if (ev.type === "elicitation_request") void this.askForm(ev.elicitation);
    else if (ev.type === "elicitation_resolved") {
      const open = this.open.get(ev.id);
      if (open) open.abort();
      if (ev.by !== "user" || open) this.write(`  ${ev.action === "accept" ? "✓" : "✗"} ${terminalText(ev.message)}\n`);
    } else if (ev.type === "approval_request") void this.ask(ev.approval);
    else if (ev.type === "approval_resolved") {
      const open = this.open.get(ev.id);
      if (open) open.abort();
      if (ev.by !== "user" || open) this.write(`  ${ev.allowed ? "✓" : "✗"} ${ev.message}\n`);
    }
  }

  /** An MCP server's elicitation: the form asked field by field, the answer sent with `approvals.elicitation.answer`. */
  private async askForm(e: PendingElicitation): Promise<void> {
    if (this.open.has(e.id)) return;
    const controller = new AbortController();
    this.open.set(e.id, controller);
    const answer = await askElicitation(this.rl(), e, controller.signal, this.write);
    this.open.delete(e.id);
    if (!answer) return;
    try {
      await this.client()!.call("approvals.elicitation.answer", { id: e.id, action: answer.action, ...(answer.content ? { content: answer.content } : {}) });
      this.write(answer.action === "accept" ? "  ✓ answered\n" : `  ✗ ${answer.action === "decline" ? "declined" : "cancelled"}\n`);
    } catch (error) {
      this.write(`  ${terminalText(toAgentError(error).message)}\n`);
    }
  }

  private async ask(a: PendingApproval): Promise<void> {
    if (this.open.has(a.id)) return;
    const controller = new AbortController();
    this.open.set(a.id, controller);
    const answer = await askApproval(this.rl(), a, controller.signal, this.write);
    this.open.delete(a.id);
    if (!answer) return;
    try {
      const r = await this.client()!.call("approvals.answer", { id: a.id, choice: answer.choice, ...(answer.reason ? { reason: answer.reason } : {}) });
      this.write(r.allowed ? `  ✓ approved (${answer.choice})\n` : `  ✗ denied${answer.reason ? `: ${terminalText(answer.reason)}` : ""}\n`);
    } catch (error) {
      this.write(`  ${terminalText(toAgentError(error).message)}\n`);
    }
  }
}

/** Both ends are a terminal: a person can answer approval questions. */
const atTerminal = (): boolean => Boolean(process.stdin.isTTY && process.stdout.isTTY);

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const json = Boolean(cli.flags.json);
  const options: Options = { maxTurns: cli.flags.maxTurns, provider: cli.flags.provider, profile: cli.flags.profile, yolo: cli.flags.yolo === true };
  if (options.maxTurns !== undefined && (!Number.isInteger(options.maxTurns) || options.maxTurns < 1)) {
    throw new AgentError("usage.invalid", "--max-turns must be a positive integer");
  }
  const images = (cli.flags.image ?? []).map((p) => imagePath(p));
  if (cli.flags.query !== undefined && cli.input.length) {
    throw new AgentError("usage.invalid", `agent chat -q takes the prompt as one argument (quote it); also got ${cli.input.join(" ")}`);
  }
  const prompt = cli.flags.query ?? (cli.input.length ? cli.input.join(" ") : undefined);
  if (prompt !== undefined && prompt.trim() === "") throw new AgentError("usage.invalid", "the prompt is empty: agent chat -q <prompt>");
  if (cli.flags.resume !== undefined && cli.flags.resume.trim() === "")
    throw new AgentError("usage.invalid", "--resume needs a session id (agent chat --list shows them)");
  if (envValue("AGENT_KANBAN_TASK") && prompt !== undefined && !cli.flags.list) {
    // A kanban worker runs its loop in its own process and writes through the daemon.
    const flags = {
      home: env.home,
      prompt,
      image: images,
      session: cli.flags.resume,
      "max-turns": options.maxTurns,
      provider: options.provider,
      profile: options.profile,
    };
    const args = Object.entries(flags).flatMap(([k, v]) => [v ?? []].flat().map((x) => `--${k}=${x}`));
    return execNode(fileURLToPath(new URL("../../daemon/agent/worker-main.js", import.meta.url)), json ? [...args, "--json"] : args);
  }
  let client = await connectDaemon({ home: env.home, autostart: true });
  try {
    if (cli.flags.list) {
      const { sessions } = await client.call("chat.sessions.list", {});
      printResult({ sessions }, json, ({ sessions: s }) =>
        s.length
          ? table(
              ["SESSION", "KIND", "UPDATED", "MESSAGES", "TITLE"],
              s.map((x) => [x.id, x.kind, new Date(x.updatedAt).toISOString().slice(0, 16).replace("T", " "), String(x.messageCount), x.title]),
            )
          : "no sessions yet",
      );
      return EXIT.ok;
    }
    if (cli.flags.resume !== undefined) await client.call("chat.sessions.get", { sessionId: cli.flags.resume, limit: 1 });
    if (prompt !== undefined) {
      const slash = parseSlash(prompt);
      if (slash.kind === "error") throw new AgentError("usage.invalid", slash.message);
      if (slash.kind === "command") {
        // A built-in slash command runs as it would in the chat; one that needs the chat itself says so.
        if (INTERACTIVE_ONLY.has(slash.command.handler))
          throw new AgentError("usage.invalid", `/${slash.command.name} only works inside an interactive chat: run \`agent chat\` and type it there`);
        const chat = new InteractiveChat(env, options, cli.flags.resume ?? null, images, json, true);
        chat.attach(client);
        await chat.handle(prompt);
        return EXIT.ok;
      }
      return await oneShot(client, { prompt, images, sessionId: cli.flags.resume, ...options, json, markdown: env.interactive && !json });
    }
    const chat = new InteractiveChat(env, options, cli.flags.resume ?? null, images, json);
    const code = await chat.run(client);
    client = chat.client ?? client;
    return code;
  } finally {
    client.close();
  }
}

/** Slash commands that act on the interactive chat itself, so `chat -q` refuses them. */
const INTERACTIVE_ONLY = new Set<SlashHandlerId>(["exit", "image", "debug", "statusbar", "fast", "restart"]);

function imagePath(p: string): string {
  const abs = resolve(p);
  if (!existsSync(abs)) throw new AgentError("chat.image_not_found", `no image at ${abs}`);
  return abs;
}

/** Markdown rendered for the terminal (stdout is a TTY); colours unless NO_COLOR. Loaded only then. */
async function markdownStream(): Promise<MarkdownStream> {
  const { MarkdownStream } = await import("../../tui/markdown-ansi.js");
  return new MarkdownStream(() => process.stdout.columns || 80, !process.env.NO_COLOR);
}

async function oneShot(
  client: DaemonClient,
  p: Options & { prompt: string; images: string[]; sessionId?: string; json: boolean; markdown: boolean },
): Promise<number> {
  let sessionId = p.sessionId ?? null;
  // At a terminal, approval questions are asked here; otherwise the non-interactive rules apply.
  const interactive = atTerminal();
  let rl: Interface | null = null;
  const asker = new ApprovalAsker(
    () => client,
    () => {
      rl ??= createInterface({ input: process.stdin, output: process.stdout, terminal: true });
      rl.on("SIGINT", onSigint);
      return rl;
    },
    (text) => process.stderr.write(text),
  );
  const progressShown = new Map<string, string>();
  const off = client.onEvent((e) => {
    const ev = e.data as ChatEvent;
    if (!e.topic.startsWith("chat.session.")) return;
    if (ev.type === "turn_start") sessionId = ev.sessionId;
    // A long tool's progress (a queued video job), on stderr so stdout stays the answer; a line per change of state.
    if (!p.json && ev.type === "tool_progress" && (!sessionId || ev.sessionId === sessionId)) {
      const text = terminalText(ev.text).replace(/\s+/g, " ");
      const state = text.replace(/, \d+ s$/, "");
      if (progressShown.get(ev.id) !== state) process.stderr.write(`agent: … ${text}\n`);
      progressShown.set(ev.id, state);
    }
    if (interactive && (!sessionId || ev.sessionId === sessionId)) asker.onEvent(ev);
    // Piped: a call the non-interactive rule denied is said on stderr (the answer alone would hide it).
    else if (
      !interactive &&
      !p.json &&
      ((ev.type === "approval_resolved" && !ev.allowed) || ev.type === "elicitation_resolved") &&
      ev.by === "rule" &&
      (!sessionId || ev.sessionId === sessionId)
    )
      process.stderr.write(`agent: ${terminalText(ev.message)}\n`);
    // An MCP server whose tools are left out: said on stderr (the interactive view prints its own line).
    else if (!interactive && !p.json && ev.type === "notice" && (!sessionId || ev.sessionId === sessionId))
      process.stderr.write(`agent: ${terminalText(ev.message)}\n`);
  });
  let interrupts = 0;
  const onSigint = () => {
    interrupts++;
    if (sessionId && interrupts === 1) {
      process.stderr.write("\ninterrupting… (Ctrl-C again to leave at once)\n");
      void client.call("chat.interrupt", { sessionId }).catch(() => undefined);
    } else process.exit(EXIT.interrupted);
  };
  process.on("SIGINT", onSigint);
  try {
    const slash = await oneShotSlash(client, p.prompt, p.profile);
    const result = await client.call("chat.send", {
      prompt: slash ? slash.args : p.prompt,
      ...(slash ? { slash: slash.slug } : {}),
      ...(p.sessionId ? { sessionId: p.sessionId } : {}),
      ...(p.images.length ? { images: p.images } : {}),
      ...(p.maxTurns ? { maxTurns: p.maxTurns } : {}),
      ...(p.provider ? { provider: p.provider } : {}),
      ...(p.profile ? { profile: p.profile } : {}),
      ...(interactive ? { interactive: true } : {}),
      ...(p.yolo ? { yolo: true } : {}),
      cwd: process.cwd(),
    });
    if (p.markdown) {
      // The answer is cleaned of terminal escapes before it is rendered (the styles are ours).
      const md = await markdownStream();
      process.stdout.write(md.push(terminalText(result.answer)) + md.end());
    } else printResult(result, p.json, (r) => r.answer);
    if (result.stopReason === "interrupted") return EXIT.interrupted;
    if (result.stopReason === "max_turns") {
      if (!p.json)
        process.stderr.write(
          `agent: the turn stopped at --max-turns ${p.maxTurns ?? ""} before the model finished (session ${result.sessionId})\n`.replace("  ", " "),
        );
      return EXIT.failure;
    }
    return EXIT.ok;
  } finally {
    off();
    (rl as Interface | null)?.close();
    process.off("SIGINT", onSigint);
  }
}

/** `-q "/<skill or bundle> text"`: what the daemon knows by that name is loaded; anything else is sent as typed. */
async function oneShotSlash(client: DaemonClient, prompt: string, profile?: string): Promise<{ slug: string; args: string } | null> {
  const parsed = parseSlash(prompt);
  if (parsed.kind !== "forward") return null;
  try {
    const found = await client.call("skills.resolve", { name: parsed.name, ...(profile ? { profile } : {}) });
    return { slug: found.slug, args: parsed.args };
  } catch (error) {
    if (toAgentError(error).code === "skills.not_found") return null;
    throw error;
  }
}

/** The line-mode chat: readline input, streamed output, slash commands. */
class InteractiveChat {
  client: DaemonClient | null = null;
  private rl!: Interface;
  private turnRunning = false;
  private debug = false;
  private statusbar = true;
  private fast = false;
  private pendingImages: string[];
  private atLineStart = true;
  private toolStarted = new Map<string, number>();
  private toolProgress = new Map<string, string>();
  private contextTokens = 0;
  private yolo: boolean;
  /** `/coder-runtime`: the runtime chosen for this chat's turns (null: config decides). */
  private runtime: "coder_app_server" | "default" | null = null;
  private approvals = new ApprovalAsker(
    () => this.client,
    () => this.rl,
    (text) => this.out(text),
  );
  /** Streamed model text is cleaned as it arrives (a sequence may span deltas). */
  private deltas = new TerminalTextFilter();
  /** On a terminal, the cleaned text is rendered as Markdown block by block; piped, it stays raw. */
  private md: MarkdownStream | null = null;

  constructor(
    private readonly env: CliEnv,
    private readonly options: Options,
    private sessionId: string | null,
    images: string[],
    private readonly json: boolean,
    /** `chat -q "/command"`: one command, whose failure is the command's (not printed and gone past). */
    private readonly oneCommand = false,
  ) {
    this.pendingImages = images;
    this.yolo = options.yolo === true;
  }

  /** Use `client` for one command (`chat -q "/…"`), without the line editor. */
  attach(client: DaemonClient): void {
    this.wire(client);
  }

  /** Writes text that is already clean (ours, or through terminalText / the delta filter). */
  private out(text: string): void {
    if (!text) return;
    process.stdout.write(text);
    this.atLineStart = text.endsWith("\n");
  }

  /** A whole line; it may carry model, tool or file text, so it is cleaned first. */
  private line(text: string): void {
    if (!this.atLineStart) this.out("\n");
    const clean = terminalText(text);
    this.out(clean.endsWith("\n") ? clean : `${clean}\n`);
  }

  private wire(client: DaemonClient): void {
    this.client = client;
    client.onEvent((e) => {
      if (!e.topic.startsWith("chat.session.")) return;
      this.render(e.data as ChatEvent);
    });
  }

  private render(ev: ChatEvent): void {
    if (this.sessionId && ev.sessionId !== this.sessionId) return;
    if (
      (ev.type === "approval_request" || ev.type === "approval_resolved" || ev.type === "elicitation_request" || ev.type === "elicitation_resolved") &&
      this.interactive
    ) {
      if (!this.atLineStart) this.out("\n");
      this.approvals.onEvent(ev);
      return;
    }
    switch (ev.type) {
      case "turn_start":
        this.deltas = new TerminalTextFilter();
        this.md?.reset();
        break;
      case "text":
        this.text(this.deltas.push(ev.delta));
        break;
      default:
        break;
    }
    // Anything else prints a line of its own: the Markdown held so far goes first.
    if ((ev.type === "tool_call" || ev.type === "tool_progress" || ev.type === "retry" || ev.type === "notice") && this.md) this.out(this.md.end());
    switch (ev.type) {
      case "tool_call":
        this.toolStarted.set(ev.id, Date.now());
        this.line(this.debug ? `  ⚙ ${ev.name} ${JSON.stringify(ev.args)}` : `  ⚙ ${ev.name}`);
        break;
      case "tool_progress": {
        // One line per change of state; the seconds counting up alone do not make a new line.
        const text = terminalText(ev.text).replace(/\s+/g, " ");
        const state = text.replace(/, \d+ s$/, "");
        if (this.toolProgress.get(ev.id) !== state) this.line(`  … ${text}`);
        this.toolProgress.set(ev.id, state);
        break;
      }
      case "tool_result":
        this.toolProgress.delete(ev.id);
        if (this.debug) this.line(`  ${ev.ok ? "✓" : "✗"} ${ev.name} (${Math.round(ev.durationMs)} ms) ${ev.preview}`);
        else if (!ev.ok) this.line(`  ✗ ${ev.name} failed`);
        break;
      case "retry":
        this.line(`  (model call failed, retry ${ev.attempt} in ${(ev.delayMs / 1000).toFixed(1)} s: ${ev.reason})`);
        break;
      case "notice":
        this.line(`  (${terminalText(ev.message)})`);
        break;
      case "usage":
        this.contextTokens = ev.contextTokens;
        break;
      default:
        break;
    }
  }

  /** A person at a terminal answers approval questions; piped input gets the non-interactive rules. */
  private get interactive(): boolean {
    return atTerminal();
  }

  /** Clean model text: raw when piped, else through the Markdown renderer. */
  private text(clean: string): void {
    this.out(this.md ? this.md.push(clean) : clean);
  }

  async run(client: DaemonClient): Promise<number> {
    this.wire(client);
    const tty = Boolean(process.stdin.isTTY);
    if (this.env.interactive && !this.json) this.md = await markdownStream();
    this.rl = createInterface({
      input: process.stdin,
      output: process.stdout,
      terminal: tty,
      completer: (line: string) => completeSlash(line),
      historySize: 500,
    });
    // Take the iterator now: it buffers lines that arrive (piped input) while we set up.
    const lines = this.rl[Symbol.asyncIterator]();
    const status = await client.call("chat.status", this.options.provider ? { provider: this.options.provider } : {});
    // display.statusbar decides whether the status line starts on; /statusbar toggles it for this chat.
    this.statusbar = status.statusbar !== false;
    if (this.sessionId) {
      const { session } = await client.call("chat.sessions.get", { sessionId: this.sessionId, limit: 1 });
      this.line(`resumed session ${session.id}${session.title ? ` "${session.title}"` : ""} (${session.messageCount} messages)`);
      if (session.active) {
        this.line("a turn is running in this session; attaching…");
        await this.guard(async () => {
          this.turnRunning = true;
          const attached = client.call("chat.attach", { sessionId: session.id, ...(this.interactive ? { interactive: true } : {}) });
          // Questions asked before this chat attached (another client is asking too): ask them here.
          if (this.interactive)
            void client
              .call("approvals.pending", { sessionId: session.id })
              .then((p) => {
                for (const a of p.approvals) this.approvals.onEvent({ type: "approval_request", sessionId: a.sessionId, turnId: a.turnId ?? "", approval: a });
              })
              .catch(() => undefined);
          if (this.interactive)
            void client
              .call("approvals.elicitation.pending", { sessionId: session.id })
              .then((p) => {
                for (const e of p.elicitations)
                  this.approvals.onEvent({ type: "elicitation_request", sessionId: e.sessionId, turnId: e.turnId ?? "", elicitation: e });
              })
              .catch(() => undefined);
          const r = await attached;
          if (r.result) this.finishTurn(r.result, true);
        });
        this.turnRunning = false;
      }
    }
    if (!status.configured) this.line(`note: ${status.problem}`);
    else if (tty) this.line(`agent chat · ${status.provider} ${status.model} · /help for commands, Ctrl-D to leave`);

    this.rl.on("SIGINT", () => {
      if (this.turnRunning && this.sessionId) {
        this.line("interrupting…");
        void this.client?.call("chat.interrupt", { sessionId: this.sessionId }).catch(() => undefined);
      } else {
        this.rl.close();
      }
    });
    if (tty) this.rl.prompt();
    for await (const raw of { [Symbol.asyncIterator]: () => lines }) {
      const input = raw.trim();
      if (input) {
        const next = await this.handle(input);
        if (next === "exit") break;
      }
      if (tty) this.rl.prompt();
    }
    this.rl.close();
    return EXIT.ok;
  }

  /** Run an action; an error is printed and the chat goes on. */
  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (error) {
      if (this.oneCommand) throw error;
      const e = toAgentError(error);
      this.line(`error: ${e.message}`);
      if (e.code === "daemon.disconnected") this.line("the daemon went away; /restart starts it again");
    }
  }

  async handle(input: string): Promise<"exit" | void> {
    const parsed = parseSlash(input);
    if (parsed.kind === "error") {
      this.line(parsed.message);
      return;
    }
    if (parsed.kind === "none") {
      await this.guard(() => this.send(input));
      return;
    }
    if (parsed.kind === "forward") {
      await this.guard(() => this.loadSkill(parsed.name, parsed.args, parsed.hint));
      return;
    }
    const client = this.client!;
    const { command, args, flags } = parsed;
    switch (command.handler) {
      case "help":
        this.line(slashHelp());
        return;
      case "exit":
        if (flags.includes("--delete") || flags.includes("-d")) {
          if (!this.sessionId) this.line("no session to delete yet");
          else
            await this.guard(async () => {
              await client.call("chat.sessions.delete", { sessionId: this.sessionId! });
              this.line(`deleted session ${this.sessionId}`);
            });
        } else if (this.sessionId) this.line(`session ${this.sessionId} (resume with: agent chat --resume ${this.sessionId})`);
        return "exit";
      case "image": {
        const path = resolve(args.replace(/^["']|["']$/g, ""));
        if (!existsSync(path)) this.line(`no file at ${path}`);
        else {
          this.pendingImages.push(path);
          this.line(`image attached to the next prompt: ${path}`);
        }
        return;
      }
      case "mcp":
        return this.guard(async () => {
          const r = await client.call("mcp.list", {});
          this.line(listText(r.profile, r.servers));
        });
      case "stop":
        // A turn in line mode holds the prompt until it ends (Ctrl-C interrupts it); typed after it, there is nothing to stop.
        if (this.turnRunning && this.sessionId) {
          this.line("interrupting…");
          void this.client?.call("chat.interrupt", { sessionId: this.sessionId }).catch(() => undefined);
        } else this.line("nothing is running (Ctrl-C interrupts a running turn)");
        return;
      case "yolo":
        return this.guard(async () => {
          this.yolo = !this.yolo;
          if (this.sessionId) await client.call("approvals.yolo", { sessionId: this.sessionId, on: this.yolo });
          this.line(
            this.yolo
              ? "yolo on: approvals are off for this session; risky tool calls run unasked (/yolo again turns them back on)"
              : "yolo off: approvals are back on for this session",
          );
        });
      case "coder-runtime":
        return this.guard(async () => {
          const word = args.trim().toLowerCase();
          if (word && !(CODER_RUNTIME_ARGS as readonly string[]).includes(word)) {
            this.line(`/coder-runtime takes ${CODER_RUNTIME_ARGS.join(", ")} (or nothing, to show the state)`);
            return;
          }
          const mode = (word || undefined) as (typeof CODER_RUNTIME_ARGS)[number] | undefined;
          const r = await client.call("coder.runtime", {
            ...(mode ? { mode } : {}),
            current: this.runtime,
            ...(this.options.provider ? { provider: this.options.provider } : {}),
          });
          if (mode) this.runtime = r.mode;
          this.line(coderRuntimeText(r));
        });
      case "debug":
        this.debug = !this.debug;
        this.line(`debug ${this.debug ? "on: tool arguments, results and timings are shown" : "off"}`);
        return;
      case "statusbar":
        this.statusbar = !this.statusbar;
        this.line(`status line ${this.statusbar ? "on" : "off"}`);
        return;
      case "fast":
        return this.guard(async () => {
          const s = await client.call("chat.status", {});
          if (!s.fastModel) {
            this.line("model.fast is not set in config.yaml (e.g. `model:\\n  fast: gpt-4o-mini`)");
            return;
          }
          this.fast = !this.fast;
          this.line(this.fast ? `fast mode on: next turns use ${s.fastModel}` : `fast mode off: back to ${s.model ?? "the default model"}`);
        });
      case "reload":
        return this.guard(async () => {
          await client.call("daemon.reload", {});
          const s = await client.call("chat.status", {});
          this.line(s.configured ? `reloaded config and .env: ${s.provider} ${s.model}` : `reloaded config and .env; ${s.problem}`);
        });
      case "restart":
        return this.guard(async () => {
          // Wait for the old process to be gone (its lock released) before starting the new one.
          await stopDaemonAndWait(client);
          const next = await connectDaemon({ home: this.env.home, autostart: true });
          this.wire(next);
          this.line(`daemon restarted (pid ${next.daemon.pid})${this.sessionId ? `; still in session ${this.sessionId}` : ""}`);
        });
      case "btw":
        return this.guard(async () => {
          const r = await client.call("chat.btw", {
            question: args,
            ...(this.sessionId ? { sessionId: this.sessionId } : {}),
            ...(this.options.provider ? { provider: this.options.provider } : {}),
          });
          this.line(`(btw) ${r.answer}`);
        });
      case "snapshot":
        if (!this.sessionId) {
          this.line("nothing to snapshot yet: send a prompt first");
          return;
        }
        return this.guard(async () => {
          const r = await client.call("chat.snapshot", { sessionId: this.sessionId!, ...(args ? { name: args } : {}) });
          this.line(`snapshot written: ${r.path}`);
        });
      case "handoff": {
        if (!this.sessionId) {
          this.line("nothing to hand off yet: send a prompt first");
          return;
        }
        const [platform, chat] = args.split(/\s+/).filter(Boolean);
        return this.guard(async () => {
          const r = await client.call("channels.handoff", { sessionId: this.sessionId!, platform: platform ?? "", ...(chat ? { chat } : {}) });
          this.line(`handed off: this session continues in ${r.platform} chat ${r.chatId}`);
        });
      }
      case "gquota":
        return this.guard(async () => {
          const r = await client.call("chat.quota", {});
          this.line(renderQuota(r.buckets));
        });
      case "skills":
        return this.guard(async () => {
          const r = await client.call("skills.list", this.profileParam());
          this.line(
            r.skills.length
              ? table(
                  ["SKILL", "DESCRIPTION"],
                  r.skills.map((k) => [`/${k.slug}`, k.description]),
                )
              : `no skills yet (add folders with a SKILL.md to ${r.dir})`,
          );
          for (const w of r.warnings) this.line(`skipped: ${w}`);
        });
      case "bundles":
        return this.guard(async () => {
          const r = await client.call("bundles.list", {});
          this.line(
            r.bundles.length
              ? table(
                  ["BUNDLE", "SKILLS", "DESCRIPTION"],
                  r.bundles.map((b) => [`/${b.slug}`, b.skills.join(", "), b.description]),
                )
              : "no skill bundles yet (agent bundles create <name> --skill <s>...)",
          );
          for (const w of r.warnings) this.line(`skipped: ${w}`);
        });
      case "reload-skills":
        return this.guard(async () => {
          const r = await client.call("skills.reload", this.profileParam());
          this.line(
            `skills rescanned: ${r.skills.length} skill${r.skills.length === 1 ? "" : "s"}${r.warnings.length ? `, ${r.warnings.length} skipped` : ""}`,
          );
          for (const w of r.warnings) this.line(`skipped: ${w}`);
        });
      case "cron":
        return this.guard(() => this.cron(args));
      case "sessions":
        return this.guard(() => this.sessions(args.trim()));
      case "branch":
        return this.guard(async () => {
          if (!this.sessionId) {
            this.line("nothing to branch yet: send a prompt first");
            return;
          }
          const { session } = await client.call("sessions.branch", { sessionId: this.sessionId, ...(args.trim() ? { title: args.trim() } : {}) });
          this.line(`branched: now in session ${session.id} "${session.title}" (${session.messageCount} messages copied from ${this.sessionId})`);
          this.sessionId = session.id;
        });
    }
  }

  /** `/sessions` lists this profile's recent sessions, numbered; `/sessions <n|id>` resumes one. */
  private async sessions(pick: string): Promise<void> {
    const client = this.client!;
    const { sessions } = await client.call("chat.sessions.list", { limit: 20 });
    if (!pick) {
      this.line(
        sessions.length
          ? `${table(
              ["#", "SESSION", "KIND", "MESSAGES", "TITLE"],
              sessions.map((s, i) => [String(i + 1), s.id + (s.id === this.sessionId ? " *" : ""), s.kind, String(s.messageCount), s.title]),
            )}\n/sessions <n|id> resumes one`
          : "no sessions yet",
      );
      return;
    }
    const chosen = /^\d+$/.test(pick) ? sessions[Number(pick) - 1]?.id : pick;
    if (!chosen) {
      this.line(`no session #${pick}: /sessions lists ${sessions.length}`);
      return;
    }
    const { session } = await client.call("chat.sessions.get", { sessionId: chosen, limit: 1 });
    if (this.oneCommand) {
      // `chat -q "/sessions 2"` has no chat to continue in: say how to.
      this.line(
        `session ${session.id}${session.title ? ` "${session.title}"` : ""} (${session.messageCount} messages): continue it with agent chat --resume ${session.id}`,
      );
      return;
    }
    this.sessionId = session.id;
    this.line(`resumed session ${session.id}${session.title ? ` "${session.title}"` : ""} (${session.messageCount} messages)`);
  }

  /** `/cron [list|run|pause|resume|logs <id>]`: the connection's profile's jobs. */
  private async cron(args: string): Promise<void> {
    const client = this.client!;
    const { renderJobs, renderRun } = await import("./cron.js");
    const [sub = "list", id, ...extra] = args.split(/\s+/).filter(Boolean);
    const usage = "usage: /cron [list|run <id>|pause <id>|resume <id>|logs <id>]";
    if (sub === "list") {
      if (id !== undefined) return this.line(usage);
      const r = await client.call("cron.list", {});
      return this.line(r.jobs.length ? renderJobs(r.jobs, Date.now()) : `no cron jobs in profile ${r.profile} (agent cron add <schedule> <prompt>)`);
    }
    if (!id || extra.length || !["run", "pause", "resume", "logs"].includes(sub)) return this.line(usage);
    if (sub === "run") {
      this.line(`running ${id}...`);
      return this.line(renderRun((await client.call("cron.run", { id })).run));
    }
    if (sub === "logs") {
      const r = await client.call("cron.logs", { id, limit: 5 });
      return this.line(r.runs.length ? r.runs.map(renderRun).join("\n\n") : `no runs of ${id} yet`);
    }
    const r = await client.call(sub === "pause" ? "cron.pause" : "cron.resume", { id });
    this.line(`${sub === "pause" ? "paused" : "resumed"} ${r.job.id} (${r.job.name})`);
  }

  private profileParam(): { profile?: string } {
    return this.options.profile ? { profile: this.options.profile } : {};
  }

  /** `/<name>` that is no built-in command: the daemon loads the bundle or skill of that name as the user message. */
  private async loadSkill(name: string, args: string, hint: string): Promise<void> {
    let found: Result<"skills.resolve">;
    try {
      found = await this.client!.call("skills.resolve", { name, ...this.profileParam() });
    } catch (error) {
      if (toAgentError(error).code !== "skills.not_found") throw error;
      this.line(hint);
      return;
    }
    const skipped = found.missing.length ? `; skipped, not installed: ${found.missing.join(", ")}` : "";
    this.line(found.kind === "bundle" ? `loading bundle ${found.name}: ${found.skills.join(", ") || "no skills"}${skipped}` : `loading skill ${found.name}`);
    await this.send(args, found.slug);
  }

  private async send(prompt: string, slash?: string): Promise<void> {
    const client = this.client!;
    const images = this.pendingImages;
    this.pendingImages = [];
    this.turnRunning = true;
    try {
      const result = await client.call("chat.send", {
        prompt,
        ...(this.sessionId ? { sessionId: this.sessionId } : {}),
        ...(images.length ? { images } : {}),
        ...(this.options.maxTurns ? { maxTurns: this.options.maxTurns } : {}),
        ...(this.options.provider ? { provider: this.options.provider } : {}),
        ...(this.options.profile ? { profile: this.options.profile } : {}),
        ...(this.fast ? { fast: true } : {}),
        ...(slash ? { slash } : {}),
        ...(this.interactive ? { interactive: true } : {}),
        ...(this.yolo ? { yolo: true } : {}),
        ...(this.runtime ? { runtime: this.runtime } : {}),
        cwd: process.cwd(),
      });
      this.finishTurn(result, false);
    } finally {
      this.turnRunning = false;
    }
  }

  private finishTurn(result: ChatSendResult, attached: boolean): void {
    this.sessionId = result.sessionId;
    this.text(this.deltas.end());
    if (this.md) this.out(this.md.end());
    if (this.json) {
      this.line(terminalJson(snakeKeys(result)));
      return;
    }
    // The answer was streamed; what was not (the footer, a stop note) is printed now.
    if (result.footer) this.line(`\n${result.footer}`);
    if (result.stopReason === "interrupted") this.line("(interrupted)");
    if (result.stopReason === "max_turns") this.line(`(stopped: reached --max-turns after ${result.modelCalls} model calls)`);
    if (attached && !result.answer) this.line("(the turn ended)");
    if (!this.atLineStart) this.out("\n");
    if (this.statusbar) {
      const u = result.usage;
      this.line(
        `── ${result.sessionId} · ${result.model} · turn ${u.turn.total} tok · session ${u.session.total} tok · context ~${this.contextTokens} tok${this.fast ? " · fast" : ""}${this.debug ? " · debug" : ""}${this.yolo ? " · yolo" : ""}`,
      );
    }
  }
}
