/**
 * The main thread's side of the proxy (docs/proxy.md): starts the proxy's thread
 * (proxy-thread.ts, where the listener and its relay run, in an isolate of their own: see there
 * why) and answers what it asks: the upstream's base URL and credential for each request, and a
 * new token after a 401, from the config and the credential store, which stay here. Key, origins
 * and bind rules are checked here before anything is sent, so a refused setting throws in the
 * caller (the feature's start or reload) as it would without the thread.
 */
import { existsSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { Worker } from "node:worker_threads";
import { envFlag } from "../../shared/config/env.js";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { ListenerKey } from "../http/access.js";
import type { CredentialSource } from "../models/credentials.js";
import { threadScript } from "../thread-script.js";
import { accessFor, type ProxySettings, type UpstreamCall } from "./proxy-server.js";
import type { FromProxyThread, ProxyThreadData, ToProxyThread } from "./proxy-thread.js";

/** Where requests go, as the main thread knows it: resolved per request (a reload or a sign-in applies at once). */
export interface Upstream {
  baseUrl: string;
  credentials: CredentialSource;
}

interface HostLog {
  warn(message: string, fields?: Record<string, unknown>): void;
  error(message: string, fields?: Record<string, unknown>): void;
}

/**
 * The young generation of the proxy's thread. What a relay makes dies young (a socket read's
 * buffer lives until it is written), so a young collection finds little to copy and the
 * generation never has reason to grow past this.
 */
const RELAY_YOUNG_GENERATION_MB = 16;

export class ProxyThreadHost {
  readonly startedAt = Date.now();
  private key: ListenerKey;
  private worker: Worker | null = null;
  private bound: AddressInfo | null = null;
  private closing: Promise<void> | null = null;
  private readonly counter = new Int32Array(new SharedArrayBuffer(4));
  private onClosed: (() => void) | null = null;
  private nextAccess = 1;
  private readonly accessAcks = new Map<number, () => void>();

  constructor(
    readonly settings: ProxySettings,
    private readonly upstream: () => Upstream,
    private readonly log: HostLog,
    /** The thread ended without being closed (a crash): the proxy no longer serves. */
    private readonly onLost: (error: Error) => void = () => undefined,
  ) {
    // Refuses a non-loopback bind, or cors_origins "*", without a key before a thread starts.
    this.key = accessFor(settings.host, settings).key;
  }

  get keyRequired(): boolean {
    return this.key.required;
  }

  get requests(): number {
    return Atomics.load(this.counter, 0);
  }

  address(): AddressInfo | null {
    return this.bound;
  }

  /**
   * New key, origins and hosts for the running listener. Throws, changing nothing, when refused;
   * else resolves once the thread has them, so the reload that asked is answered after the old
   * key stopped working.
   */
  setAccess(access: Pick<ProxySettings, "token" | "corsOrigins" | "allowedHosts">): Promise<void> {
    this.key = accessFor(this.settings.host, access).key;
    const worker = this.worker;
    if (!worker) return Promise.resolve();
    const id = this.nextAccess++;
    return new Promise<void>((resolve) => {
      this.accessAcks.set(id, resolve);
      this.send({ t: "access", id, access: { token: access.token, corsOrigins: [...access.corsOrigins], allowedHosts: [...access.allowedHosts] } });
    });
  }

  listen(): Promise<AddressInfo> {
    const script = threadScript(import.meta.url, "proxy-thread.js");
    if (!existsSync(script)) return Promise.reject(new Error(`the proxy thread is not built (${script}); run npm run build`));
    const settings: ProxySettings = { ...this.settings, corsOrigins: [...this.settings.corsOrigins], allowedHosts: [...this.settings.allowedHosts] };
    const worker = new Worker(script, {
      workerData: { settings, counter: this.counter, testCrash: envFlag("AGENT_PROXY_TEST_CRASH") } satisfies ProxyThreadData,
      resourceLimits: { maxYoungGenerationSizeMb: RELAY_YOUNG_GENERATION_MB },
    });
    this.worker = worker;
    return new Promise<AddressInfo>((resolve, reject) => {
      let listening = false;
      const lost = (error: Error) => {
        if (this.worker !== worker) return;
        this.worker = null;
        this.bound = null;
        for (const ack of this.accessAcks.values()) ack(); // nothing serves with the old key any more
        this.accessAcks.clear();
        if (!listening) return reject(error);
        if (this.closing) return;
        this.log.error(`proxy: its thread stopped: ${error.message}`);
        this.onLost(error);
      };
      worker.on("message", (m: FromProxyThread) => {
        switch (m.t) {
          case "listening":
            listening = true;
            this.bound = m.address as AddressInfo;
            return resolve(this.bound);
          case "failed":
            this.worker = null;
            void worker.terminate();
            return reject(AgentError.received(m.error.code, m.error.message));
          case "ask":
            return void this.answer(m);
          case "warn":
            return this.log.warn(m.message, m.fields);
          case "access-set":
            this.accessAcks.get(m.id)?.();
            this.accessAcks.delete(m.id);
            return;
          case "closed":
            return this.onClosed?.();
        }
      });
      // An uncaught error is reported ('error'), then the thread ends ('exit'): it counts as lost
      // at its exit, once its listener is gone, so a start that follows can bind the same port.
      let crash: Error | null = null;
      worker.on("error", (error) => {
        crash ??= error;
      });
      worker.on("exit", (code) => lost(crash ?? new Error(`the proxy thread exited (code ${code})`)));
      this.send({ t: "listen" });
    });
  }

  /** Stops the listener (its open connections too) and the thread. */
  close(): Promise<void> {
    this.closing ??= this.stop();
    return this.closing;
  }

  private async stop(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    await new Promise<void>((resolve) => {
      this.onClosed = resolve;
      worker.once("exit", () => resolve());
      this.send({ t: "close" });
    });
    this.worker = null;
    this.bound = null;
    await worker.terminate();
    for (const ack of this.accessAcks.values()) ack();
    this.accessAcks.clear();
  }

  private send(m: ToProxyThread): void {
    this.worker?.postMessage(m);
  }

  private async answer(m: Extract<FromProxyThread, { t: "ask" }>): Promise<void> {
    try {
      const upstream = this.upstream();
      let value: UpstreamCall | string | null;
      if (m.op === "resolve") {
        const token = await upstream.credentials.token();
        value = { baseUrl: upstream.baseUrl, token, oauth: upstream.credentials.method === "oauth" };
      } else value = await upstream.credentials.afterUnauthorized(m.used);
      this.send({ t: "answer", id: m.id, value });
    } catch (error) {
      const e = toAgentError(error);
      this.send({ t: "answer", id: m.id, error: { code: e.code, message: e.message } });
    }
  }
}
