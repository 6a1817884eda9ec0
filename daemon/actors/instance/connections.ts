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

export type ConnType = "websocket" | "raw-websocket" | "http" | "raw-request";

/** The transport of a connection that lives for one HTTP call: nothing to send to. */
export const CALL_TRANSPORT: ConnTransport = { event: () => undefined, close: () => undefined };

export class ActorConn {
  readonly id = randomUUID();
  /** Event names the client subscribed to (`conn.on`): what `c.broadcast` sends it. */
  readonly subscriptions = new Set<string>();
  readonly connectedAt = Date.now();
  readonly view: ConnView;
  state: unknown;

  constructor(
    /** RivetKit's driver types: a connection, a raw WebSocket, or one HTTP call (an action or a raw request) for its length. */
    readonly type: ConnType,
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

/**
 * A raw WebSocket whose messages and close wait until the actor's code listens: the
 * connection's hooks run between the upgrade and onWebSocket, and what the client sends
 * meanwhile (a close too: the client saw the socket open) must reach the handler, in order.
 * Everything else (send, close, the flow control of bounded-socket.ts) passes through; who
 * must see the close at once (the runtime's disconnect) listens on the socket itself.
 */
export function holdMessages<W extends RawSocketLike>(ws: W): W {
  let early: Array<[Buffer, boolean]> | null = [];
  let flushScheduled = false;
  let closedWith: [number, Buffer] | null = null;
  const listeners: Array<(data: Buffer, isBinary: boolean) => void> = [];
  const closeListeners: Array<(code: number, reason: Buffer) => void> = [];
  ws.on("message", (data: Buffer, isBinary: boolean) => {
    if (early) early.push([data, isBinary]);
    else for (const l of listeners) l(data, isBinary);
  });
  ws.on("close", (code: number, reason: Buffer) => {
    closedWith = [code, reason];
    if (!early) for (const l of closeListeners) l(code, reason);
  });
  // After the handler's own start (what it sends first goes first), in arrival order, the close last.
  const scheduleFlush = () => {
    if (flushScheduled) return;
    flushScheduled = true;
    setImmediate(() => {
      const held = early ?? [];
      early = null;
      for (const [data, isBinary] of held) for (const l of listeners) l(data, isBinary);
      if (closedWith) for (const l of closeListeners) l(...closedWith);
    });
  };
  return new Proxy(ws, {
    get(target, prop, receiver) {
      if (prop !== "on") {
        const v = Reflect.get(target, prop, target);
        return typeof v === "function" ? v.bind(target) : v;
      }
      return (event: string, listener: (...args: any[]) => void) => {
        if (event === "message") listeners.push(listener);
        else if (event === "close") {
          closeListeners.push(listener);
          // Registered after the close was delivered: it still hears it.
          const late = closedWith;
          if (late && !early) setImmediate(() => listener(...late));
        } else return target.on(event as "close", listener);
        scheduleFlush();
        return receiver;
      };
    },
  });
}

interface RawSocketLike {
  on(event: "message", listener: (data: Buffer, isBinary: boolean) => void): unknown;
  on(event: "close", listener: (code: number, reason: Buffer) => void): unknown;
}
