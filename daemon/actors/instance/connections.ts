/**
 * The live connections of an awake actor: RivetKit connections (`handle.connect()`, over the
 * gateway's WebSocket) and raw WebSockets (`onWebSocket`). The gateway owns the sockets and
 * hands each connection a transport; the actor's code sees `conn` (id, params, state, send,
 * disconnect) and `c.conns`. An actor with a live connection does not idle-sleep.
 */
import { randomUUID } from "node:crypto";

/** How a connection reaches its client (the gateway's socket). */
export interface ConnTransport {
  /** An event (`c.broadcast` to a subscriber, or `conn.send`). */
  event(name: string, args: unknown[]): void;
  close(code: number, reason: string): void;
}

/** What the actor's code sees of a connection. */
export interface ConnView {
  readonly id: string;
  readonly params: unknown;
  state: unknown;
  send(event: string, ...args: unknown[]): void;
  disconnect(reason?: string): Promise<void>;
}

export class ActorConn {
  readonly id = randomUUID();
  /** Event names the client subscribed to (`conn.on`): what `c.broadcast` sends it. */
  readonly subscriptions = new Set<string>();
  readonly connectedAt = Date.now();
  readonly view: ConnView;
  state: unknown;

  constructor(
    readonly type: "websocket" | "raw-websocket",
    readonly params: unknown,
    readonly transport: ConnTransport,
  ) {
    const self = this;
    this.view = {
      id: this.id,
      params,
      get state() {
        return self.state;
      },
      set state(v) {
        self.state = v;
      },
      send: (event, ...args) => transport.event(String(event), args),
      disconnect: async (reason) => transport.close(1000, reason ?? ""),
    };
  }

  /** The state as the actor's code left it elsewhere (a runner's thread). */
  setState(state: unknown): void {
    this.state = state;
  }

  /** The inspector's entry: `{ id, type, details }`. */
  entry(): { id: string; type: string; details: unknown } {
    return {
      id: this.id,
      type: this.type,
      details: { params: this.params ?? null, state: this.state ?? null, subscriptions: [...this.subscriptions], connectedAt: this.connectedAt },
    };
  }
}

export class ActorConns {
  private readonly byId = new Map<string, ActorConn>();
  /** `c.conns`: the actor code's view, by id. */
  readonly views = new Map<string, ConnView>();

  get size(): number {
    return this.byId.size;
  }

  get(id: string): ActorConn | undefined {
    return this.byId.get(id);
  }

  add(conn: ActorConn): void {
    this.byId.set(conn.id, conn);
    this.views.set(conn.id, conn.view);
  }

  remove(conn: ActorConn): boolean {
    if (this.byId.get(conn.id) !== conn) return false;
    this.byId.delete(conn.id);
    this.views.delete(conn.id);
    return true;
  }

  values(): IterableIterator<ActorConn> {
    return this.byId.values();
  }

  /** `c.broadcast`: every RivetKit connection subscribed to the event. */
  broadcast(event: string, args: unknown[]): void {
    for (const conn of this.byId.values()) if (conn.type === "websocket" && conn.subscriptions.has(event)) conn.transport.event(event, args);
  }
}
