/**
 * The proxy's thread (started by proxy-thread-host.ts): the proxy's HTTP listener and its relay
 * (proxy-server.ts) in an isolate of their own. A relayed stream makes garbage at the rate it
 * flows (a fresh buffer per socket read, 1 GB per relayed GB); in the daemon's main isolate, whose
 * heap policy (daemon/heap-policy.ts) keeps the old space near its live data, that garbage drove a
 * major collection about every 16 MB relayed and doubled the relay's CPU. This isolate holds
 * little else, so the same garbage costs young collections only (docs/benchmarks.md, issue 26).
 *
 * What the thread does not hold stays in the main thread: the config, the credential store (a
 * token, its refresh after a 401) and the log. The thread asks for them by message.
 */
import { parentPort, workerData } from "node:worker_threads";
import { AgentError } from "../../shared/errors.js";
import { ProxyServer, type ProxySettings, type UpstreamCall } from "./proxy-server.js";

/** workerData: the settings and the request counter the main thread reads. */
export interface ProxyThreadData {
  settings: ProxySettings;
  counter: Int32Array;
  /** AGENT_PROXY_TEST_CRASH: a request for /test/crash ends the thread with an uncaught error. */
  testCrash?: boolean;
}

/** Main thread → thread. */
export type ToProxyThread =
  | { t: "listen" }
  | { t: "access"; id: number; access: Pick<ProxySettings, "token" | "corsOrigins" | "allowedHosts"> }
  | { t: "close" }
  | { t: "answer"; id: number; value?: UpstreamCall | string | null; error?: { code: string; message: string } };

/** Thread → main thread. */
export type FromProxyThread =
  | { t: "listening"; address: { address: string; family: string; port: number } }
  | { t: "failed"; error: { code: string; message: string } }
  | { t: "ask"; id: number; op: "resolve" }
  | { t: "ask"; id: number; op: "retry"; used: string }
  | { t: "warn"; message: string; fields?: Record<string, unknown> }
  | { t: "access-set"; id: number }
  | { t: "closed" };

const port = parentPort!;
const data = workerData as ProxyThreadData;
const post = (m: FromProxyThread) => port.postMessage(m);

let nextId = 1;
const waiting = new Map<number, { resolve(v: unknown): void; reject(e: Error): void }>();
function ask<T>(m: { op: "resolve" } | { op: "retry"; used: string }): Promise<T> {
  const id = nextId++;
  return new Promise<T>((resolve, reject) => {
    waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    post({ t: "ask", id, ...m });
  });
}

const server = new ProxyServer(
  data.settings,
  {
    resolve: () => ask<UpstreamCall>({ op: "resolve" }),
    afterUnauthorized: (used) => ask<string | null>({ op: "retry", used }),
  },
  { warn: (message, fields) => post({ t: "warn", message, fields }) },
  data.counter,
);
if (data.testCrash) server.testCrashPath = "/test/crash";

port.on("message", (m: ToProxyThread) => {
  switch (m.t) {
    case "answer": {
      const w = waiting.get(m.id);
      waiting.delete(m.id);
      if (!w) return;
      if (m.error) w.reject(AgentError.received(m.error.code, m.error.message));
      else w.resolve(m.value);
      return;
    }
    case "listen":
      server.listen().then(
        (address) => post({ t: "listening", address }),
        (error: AgentError) => post({ t: "failed", error: { code: error.code ?? "proxy.listen_failed", message: error.message } }),
      );
      return;
    case "access":
      server.setAccess(m.access); // validated by the main thread before it is sent
      post({ t: "access-set", id: m.id });
      return;
    case "close":
      void server.close().then(() => post({ t: "closed" }));
      return;
  }
});
