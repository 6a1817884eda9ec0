// The dashboard's one way to the daemon: the HTTP endpoints on its own origin (the session
// cookie rides along; no token ever lives in the page) and the one event stream.

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.message || `HTTP ${status}`);
    this.status = status;
    this.code = body?.code;
  }
}

let onSignedOut = () => {};
export function whenSignedOut(fn) {
  onSignedOut = fn;
}

async function request(method, path, body) {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: body === undefined ? {} : { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let value = null;
  try {
    value = text ? JSON.parse(text) : null;
  } catch {
    value = { message: text.slice(0, 300) };
  }
  if (res.status === 401) onSignedOut();
  if (!res.ok) throw new ApiError(res.status, value);
  return value;
}

export const get = (path) => request("GET", path);
export const send = (method, path, body) => request(method, path, body ?? {});
/** A method of the RPC table through the HTTP door (`POST /api/rpc/<method>`). */
export const rpc = (method, params = {}) => request("POST", `/api/rpc/${method}`, params);
export const kanban = (path) => `/api/plugins/kanban/${path}`;

/**
 * The event stream: one EventSource for the page; `on(type, fn)` subscribes a view. It
 * reconnects by itself; when the browser gives up (the daemon answered with an error while
 * restarting) a new one is opened a second later. `status` listeners hear "live"/"reconnecting";
 * a daemon restart (a new `started_at` in `hello`) tells every "resync" listener to re-read.
 */
class Stream {
  constructor() {
    this.listeners = new Map();
    this.source = null;
    this.startedAt = null;
    this.open();
  }

  on(type, fn) {
    let set = this.listeners.get(type);
    if (!set) this.listeners.set(type, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  fire(type, data) {
    for (const fn of this.listeners.get(type) ?? []) fn(data);
  }

  open() {
    const source = new EventSource("/api/events");
    this.source = source;
    source.addEventListener("hello", (e) => {
      const { started_at } = JSON.parse(e.data);
      const restarted = this.startedAt !== null && started_at !== this.startedAt;
      const reconnected = this.startedAt !== null;
      this.startedAt = started_at;
      this.fire("status", "live");
      if (restarted || reconnected) this.fire("resync", { restarted });
    });
    for (const type of ["kanban", "topic", "log"]) {
      source.addEventListener(type, (e) => this.fire(type, JSON.parse(e.data)));
    }
    source.onerror = () => {
      this.fire("status", "reconnecting");
      if (source.readyState === EventSource.CLOSED) {
        source.close();
        setTimeout(() => this.open(), 1000);
      }
    };
  }
}

let stream = null;
export function events() {
  stream ??= new Stream();
  return stream;
}

/** Time as the page shows it. */
export function when(ms) {
  if (!ms) return "—";
  const d = new Date(typeof ms === "number" ? ms : Date.parse(ms));
  return Number.isNaN(d.getTime()) ? String(ms) : d.toLocaleString();
}
