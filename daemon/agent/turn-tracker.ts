import { AgentError } from "../../shared/errors.js";
import { chatTopic, type ChatEvent, type ChatSendResult } from "../../shared/protocol/chat.js";

type Listener = (topic: string, data: unknown) => void;

export interface ActiveTurn {
  turnId: string;
  sessionId: string;
  controller: AbortController;
  /** The `chat.send` caller's connection, while it is connected. */
  notify: Listener | null;
  /** Other callers waiting on this turn (chat.attach). */
  watchers: Set<Listener>;
  /** Connections attached to this turn that can answer approval questions (a person at a terminal, the TUI). */
  interactive: number;
  done: Promise<ChatSendResult>;
  resolve(result: ChatSendResult): void;
  reject(error: AgentError): void;
}

/**
 * The turns running now, at most one per session: who waits for each (the sender, attached
 * watchers) and how to interrupt it. Events go to them and to every subscriber of the topic.
 */
export class TurnTracker {
  private readonly turns = new Map<string, ActiveTurn>();
  private readonly bySession = new Map<string, string>();

  constructor(private readonly broadcast: Listener) {}

  get(turnId: string): ActiveTurn | undefined {
    return this.turns.get(turnId);
  }

  isActive(sessionId: string): boolean {
    return this.bySession.has(sessionId);
  }

  private ofSession(sessionId: string): ActiveTurn | undefined {
    const turnId = this.bySession.get(sessionId);
    return turnId ? this.turns.get(turnId) : undefined;
  }

  track(sessionId: string, turnId: string): ActiveTurn {
    let resolve!: (r: ChatSendResult) => void;
    let reject!: (e: AgentError) => void;
    const done = new Promise<ChatSendResult>((res, rej) => {
      resolve = res;
      reject = rej;
    });
    done.catch(() => undefined);
    const turn: ActiveTurn = { turnId, sessionId, controller: new AbortController(), notify: null, watchers: new Set(), interactive: 0, done, resolve, reject };
    this.turns.set(turnId, turn);
    this.bySession.set(sessionId, turnId);
    return turn;
  }

  untrack(turn: ActiveTurn): void {
    this.turns.delete(turn.turnId);
    if (this.bySession.get(turn.sessionId) === turn.turnId) this.bySession.delete(turn.sessionId);
  }

  interrupt(sessionId: string): boolean {
    const turn = this.ofSession(sessionId);
    if (!turn || turn.controller.signal.aborted) return false;
    turn.controller.abort(new AgentError("chat.interrupted", "the turn was interrupted"));
    return true;
  }

  /** Count a connection that can answer approval questions while it stays (until `signal` aborts or `release`). */
  holdInteractive(turn: ActiveTurn, signal: AbortSignal): () => void {
    let held = true;
    turn.interactive++;
    const release = () => {
      if (!held) return;
      held = false;
      turn.interactive--;
    };
    signal.addEventListener("abort", release, { once: true });
    return release;
  }

  /** Wait for the session's running turn (null when none), receiving its events meanwhile. */
  async attach(sessionId: string, watcher: Listener, signal: AbortSignal, interactive = false): Promise<ChatSendResult | null> {
    const turn = this.ofSession(sessionId);
    if (!turn) return null;
    turn.watchers.add(watcher);
    signal.addEventListener("abort", () => turn.watchers.delete(watcher), { once: true });
    const release = interactive ? this.holdInteractive(turn, signal) : () => undefined;
    try {
      return await turn.done;
    } finally {
      turn.watchers.delete(watcher);
      release();
    }
  }

  emit(turn: ActiveTurn, event: ChatEvent): void {
    const topic = chatTopic(turn.sessionId);
    turn.notify?.(topic, event);
    for (const w of turn.watchers) w(topic, event);
    this.broadcast(topic, event);
  }

  /** Fail every waiting caller (the daemon stops; the turns resume at the next start). */
  rejectAll(error: AgentError): void {
    for (const t of this.turns.values()) t.reject(error);
  }
}
