/**
 * The idle timer of an awake actor: once no call and no workflow step has run for its sleep
 * timeout, it asks for the actor to sleep; while busy (or recently active) it checks again later.
 */
export interface IdleActivity {
  readonly status: string;
  /** Calls in flight. */
  readonly inFlight: number;
  /** Workflow steps running. */
  readonly activeSteps: number;
  /** When the last call or step finished (epoch ms). */
  readonly lastActivity: number;
  /** Live connections: a connected actor stays awake. */
  readonly openConnections?: number;
}

export class IdleSleepTimer {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly actor: IdleActivity,
    private readonly timeoutMs: number,
    private readonly onIdle: () => void,
  ) {}

  start(): void {
    this.timer = setTimeout(() => this.check(), this.timeoutMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearTimeout(this.timer);
  }

  private check(): void {
    const a = this.actor;
    if (a.status !== "awake") return;
    const idleFor = Date.now() - a.lastActivity;
    const busy = a.inFlight > 0 || a.activeSteps > 0 || (a.openConnections ?? 0) > 0;
    if (busy || idleFor < this.timeoutMs) {
      const wait = busy ? this.timeoutMs : this.timeoutMs - idleFor;
      this.timer = setTimeout(() => this.check(), Math.max(10, wait));
      this.timer.unref();
      return;
    }
    this.onIdle();
  }
}
