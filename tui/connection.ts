import { EventEmitter } from "node:events";
import { connectDaemon, type DaemonClient } from "../shared/client/index.js";
import { stopDaemonAndWait } from "../shared/client/daemon-process.js";
import { AgentError } from "../shared/errors.js";
import type { EventMessage, MethodName, Params, Result } from "../shared/protocol/index.js";

export type DaemonState = "connecting" | "connected" | "reconnecting";

/** One line of RPC traffic, for the `--dev` panel. */
export interface TrafficEntry {
  at: number;
  dir: "→" | "←" | "✗" | "⇠";
  text: string;
}

/**
 * The TUI's link to the daemon: the shared socket client, reconnected when the daemon goes
 * away (a restart, a crash). Subscriptions are replayed on the new connection. Emits `state`
 * (DaemonState), `event` (EventMessage), `reconnected` (pid) and `traffic` (TrafficEntry).
 */
export class Connection extends EventEmitter {
  client: DaemonClient | null = null;
  state: DaemonState = "connecting";
  private topics = new Set<string>();
  private closing = false;
  private nextCallId = 1;
  private autostartNow = false;

  constructor(
    private readonly home: string,
    private readonly profile: string | undefined,
    private readonly recordTraffic: boolean,
  ) {
    super();
    this.setMaxListeners(50);
  }

  get pid(): number | null {
    return this.client?.daemon.pid ?? null;
  }

  get connectedProfile(): string {
    return this.client?.daemon.profile ?? this.profile ?? "default";
  }

  /** Connect (starting the daemon if needed); `pending` is a connection already being made. */
  async start(pending?: Promise<DaemonClient>): Promise<void> {
    this.attach(await (pending ?? connectDaemon({ home: this.home, autostart: true, ...(this.profile ? { profile: this.profile } : {}) })));
  }

  private attach(client: DaemonClient): void {
    this.client = client;
    client.onEvent((event: EventMessage) => {
      if (this.recordTraffic) this.traffic("⇠", `${event.topic} ${summarize(event.data, 100)}`);
      this.emit("event", event);
    });
    this.setState("connected");
    if (this.topics.size) void this.call("events.subscribe", { topics: [...this.topics] }).catch(() => undefined);
    void client.closed().then(() => {
      if (this.client !== client || this.closing) return;
      this.client = null;
      this.setState("reconnecting");
      void this.reconnect();
    });
  }

  /**
   * Wait for a daemon to come back; after a few seconds without one, start it (as every client
   * starts the daemon on demand).
   */
  private async reconnect(): Promise<void> {
    const since = Date.now();
    for (let delay = 100; !this.closing; delay = Math.min(delay * 2, 1000)) {
      try {
        const autostart = this.autostartNow || Date.now() - since > 3000;
        const client = await connectDaemon({ home: this.home, autostart, ...(this.profile ? { profile: this.profile } : {}) });
        if (this.closing) {
          client.close();
          return;
        }
        this.autostartNow = false;
        this.attach(client);
        this.emit("reconnected", client.daemon.pid);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, delay));
      }
    }
  }

  /** Stop the daemon, wait for it to be gone, and start a new one (`/restart`). */
  async restartDaemon(): Promise<void> {
    const client = this.client;
    if (!client) throw new AgentError("daemon.disconnected", "the daemon is not connected (reconnecting…)");
    this.autostartNow = true;
    await stopDaemonAndWait(client);
  }

  private setState(state: DaemonState): void {
    this.state = state;
    this.emit("state", state);
  }

  /** The client, waiting a while for a connection that is being made (start-up, a restart). */
  private async connected(timeoutMs = 10_000): Promise<DaemonClient> {
    if (!this.client && !this.closing) {
      await new Promise<void>((resolve) => {
        const onState = (s: DaemonState) => {
          if (s === "connected") finish();
        };
        const finish = () => {
          clearTimeout(timer);
          this.off("state", onState);
          resolve();
        };
        const timer = setTimeout(finish, timeoutMs);
        this.on("state", onState);
      });
    }
    if (!this.client) throw new AgentError("daemon.disconnected", "the daemon is not connected (reconnecting…)");
    return this.client;
  }

  async call<M extends MethodName>(method: M, params: Params<M>, signal?: AbortSignal): Promise<Result<M>> {
    const client = await this.connected();
    if (!this.recordTraffic) return client.call(method, params, signal);
    const id = this.nextCallId++;
    const t0 = performance.now();
    this.traffic("→", `#${id} ${method} ${summarize(params, 100)}`);
    try {
      const result = await client.call(method, params, signal);
      this.traffic("←", `#${id} ${method} ${Math.round(performance.now() - t0)} ms ${summarize(result, 80)}`);
      return result;
    } catch (error) {
      this.traffic("✗", `#${id} ${method} ${Math.round(performance.now() - t0)} ms ${(error as Error).message}`);
      throw error;
    }
  }

  /** Subscribe to event topics, now and on every later connection. */
  async subscribe(topics: string[]): Promise<void> {
    const fresh = topics.filter((t) => !this.topics.has(t));
    for (const t of fresh) this.topics.add(t);
    if (fresh.length && this.client) await this.call("events.subscribe", { topics: fresh });
  }

  async unsubscribe(topics: string[]): Promise<void> {
    const known = topics.filter((t) => this.topics.delete(t));
    if (known.length && this.client) await this.call("events.unsubscribe", { topics: known }).catch(() => undefined);
  }

  private traffic(dir: TrafficEntry["dir"], text: string): void {
    this.emit("traffic", { at: Date.now(), dir, text } satisfies TrafficEntry);
  }

  close(): void {
    this.closing = true;
    this.client?.close();
    this.client = null;
  }
}

function summarize(value: unknown, max: number): string {
  let s: string;
  try {
    s = JSON.stringify(value) ?? "";
  } catch {
    s = String(value);
  }
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}
