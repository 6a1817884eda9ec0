/**
 * The Microsoft Graph change-notification listener, on its own port (MSGRAPH_WEBHOOK_PORT):
 *
 *   POST /msgraph/notifications?validationToken=…   the subscription's validation handshake
 *   POST /msgraph/notifications                     notifications ({ value: [...] })
 *
 * The access rules are daemon/http/access.ts's `NotificationListenerAccess` (the one place):
 * no browser (Origin), the TCP peer inside MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS (403 otherwise),
 * any Host. Then:
 *
 * - a validation request is answered at once: 200, text/plain, the token echoed (Graph allows 10 s);
 * - each notification's `clientState` is compared in constant time; when none of a body's
 *   notifications carries the right one the answer is 403, otherwise the wrong ones are dropped;
 * - a notification whose resource is outside MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES is dropped;
 * - a duplicate (same subscription, change, resource and resource id as one seen recently; the
 *   memory is bounded) is dropped;
 * - the answer is 202, sent before any work: the accepted notifications are handed on after it.
 */
import { createHash } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { AgentError } from "../../../shared/errors.js";
import { accessStatus, type NotificationListenerAccess } from "../../http/access.js";
import { readBody } from "../../http/request-body.js";
import { resourceAccepted } from "./teams-settings.js";
import { closeServer } from "../../http/server-close.js";

export const NOTIFICATIONS_PATH = "/msgraph/notifications";
export const MAX_NOTIFICATION_BODY_BYTES = 1024 * 1024;
/** Recently seen notification keys kept for dropping duplicates. */
export const DEDUP_CAPACITY = 4096;

/** The part of a Graph change notification the listener reads. */
export interface GraphNotification {
  subscriptionId?: string;
  clientState?: string;
  changeType?: string;
  resource?: string;
  tenantId?: string;
  lifecycleEvent?: string;
  resourceData?: { id?: string; "@odata.type"?: string; "@odata.id"?: string; meetingOrganizer?: { user?: { id?: string } } } & Record<string, unknown>;
}

/** An accepted notification, with the key it was deduplicated by. */
export interface AcceptedNotification {
  key: string;
  notification: GraphNotification & { resource: string };
}

export interface ListenerCounts {
  validations: number;
  accepted: number;
  badClientState: number;
  resourceRefused: number;
  duplicates: number;
  sourceRefused: number;
  lifecycle: number;
}

/** A set of the last `capacity` keys (insertion order; the oldest goes first). */
export class RecentKeys {
  private readonly keys = new Set<string>();
  constructor(private readonly capacity: number) {}
  /** True when `key` was seen (and still remembered); remembers it otherwise. */
  seen(key: string): boolean {
    if (this.keys.has(key)) return true;
    this.keys.add(key);
    if (this.keys.size > this.capacity) this.keys.delete(this.keys.values().next().value as string);
    return false;
  }
  get size(): number {
    return this.keys.size;
  }
}

export interface MsgraphWebhookOptions {
  host: string;
  port: number;
  access: NotificationListenerAccess;
  acceptedResources: readonly string[];
  /** Called after the 202 with the body's accepted notifications (never throws into the listener). */
  onAccepted(list: AcceptedNotification[]): Promise<void>;
  /** Something refused or dropped, for the log (never the client state or the body). */
  onRefused(reason: string, detail: Record<string, unknown>): void;
  dedupCapacity?: number;
}

function answer(res: ServerResponse, status: number, body?: unknown): void {
  if (body === undefined) {
    res.writeHead(status, { "content-length": "0" });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json; charset=utf-8", "content-length": Buffer.byteLength(text) });
  res.end(text);
}

const notificationKey = (n: GraphNotification) =>
  createHash("sha256")
    .update(JSON.stringify([n.subscriptionId ?? "", n.changeType ?? "", n.resource ?? "", n.resourceData?.id ?? "", n.lifecycleEvent ?? ""]))
    .digest("hex")
    .slice(0, 32);

export class MsgraphWebhook {
  private server: Server | null = null;
  private readonly recent: RecentKeys;
  readonly counts: ListenerCounts = { validations: 0, accepted: 0, badClientState: 0, resourceRefused: 0, duplicates: 0, sourceRefused: 0, lifecycle: 0 };
  /** Work handed on after a 202 and not finished yet (tests and stop wait for it). */
  private readonly inFlight = new Set<Promise<void>>();
  private ownUrl: string | null = null;

  constructor(private readonly options: MsgraphWebhookOptions) {
    this.recent = new RecentKeys(options.dedupCapacity ?? DEDUP_CAPACITY);
  }

  /** `http://host:port` once listening. */
  get url(): string | null {
    return this.ownUrl;
  }

  async start(): Promise<void> {
    const server = createServer((req, res) => {
      this.handle(req, res).catch((error) => {
        this.options.onRefused("internal error", { error: (error as Error).message });
        if (!res.headersSent) answer(res, 500, { error: { code: "internal.error", message: "internal error" } });
        else res.end();
      });
    });
    server.headersTimeout = 10_000;
    server.requestTimeout = 30_000;
    await new Promise<void>((resolve, reject) => {
      server.once("error", (error) =>
        reject(
          new AgentError("teams.api_error", `the Graph notification listener cannot listen on ${this.options.host}:${this.options.port}: ${error.message}`),
        ),
      );
      server.listen(this.options.port, this.options.host, resolve);
    });
    this.server = server;
    const a = server.address() as AddressInfo;
    this.ownUrl = `http://${a.family === "IPv6" ? `[${a.address}]` : a.address}:${a.port}`;
  }

  async stop(): Promise<void> {
    const server = this.server;
    this.server = null;
    if (server) {
      await closeServer(server);
    }
    await Promise.allSettled([...this.inFlight]);
  }

  /** Resolves when the work of every accepted notification so far has finished. */
  async settled(): Promise<void> {
    while (this.inFlight.size) await Promise.allSettled([...this.inFlight]);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    try {
      this.options.access.check(req);
    } catch (error) {
      const e = error as AgentError;
      if (e.code === "auth.forbidden_source") this.counts.sourceRefused++;
      this.options.onRefused(e.code === "auth.forbidden_source" ? "source outside the allowed networks" : "browser request", {
        source: req.socket.remoteAddress,
      });
      req.resume();
      return answer(res, accessStatus(e.code) ?? 403, { error: { code: e.code, message: e.message } });
    }
    const url = new URL(req.url ?? "/", "http://listener");
    if (url.pathname !== NOTIFICATIONS_PATH) {
      req.resume();
      return answer(res, 404, { error: { code: "route.not_found", message: `not found; Graph posts to ${NOTIFICATIONS_PATH}` } });
    }
    const validationToken = url.searchParams.get("validationToken");
    if (validationToken !== null && (req.method === "POST" || req.method === "GET")) {
      // The handshake: the token back, as plain text, at once (before the body, which is empty).
      req.resume();
      if (validationToken.length > 4096) return answer(res, 400, { error: { code: "request.invalid", message: "validationToken is too long" } });
      this.counts.validations++;
      res.writeHead(200, {
        "content-type": "text/plain; charset=utf-8",
        "x-content-type-options": "nosniff",
        "content-length": Buffer.byteLength(validationToken),
      });
      res.end(validationToken);
      return;
    }
    if (req.method !== "POST") {
      req.resume();
      res.setHeader("allow", "POST");
      return answer(res, 405, { error: { code: "request.invalid", message: "POST only" } });
    }
    let body: Buffer;
    try {
      body = await readBody(req, MAX_NOTIFICATION_BODY_BYTES);
    } catch (error) {
      const code = error instanceof AgentError ? error.code : "request.aborted";
      return answer(res, code === "request.body_too_large" ? 413 : 400, { error: { code, message: "the body could not be read" } });
    }
    let list: GraphNotification[];
    try {
      const parsed = JSON.parse(body.toString("utf8")) as { value?: unknown };
      list = Array.isArray(parsed?.value) ? (parsed.value as unknown[]).filter((n): n is GraphNotification => !!n && typeof n === "object") : [];
    } catch {
      return answer(res, 400, { error: { code: "request.invalid", message: "the body is not JSON" } });
    }
    const accepted: AcceptedNotification[] = [];
    let goodState = 0;
    let badState = 0;
    let badSubscription = "";
    for (const n of list) {
      // Every notification's state is compared (constant time each), whatever the others hold.
      if (!this.options.access.clientStateMatches(n.clientState)) {
        this.counts.badClientState++;
        if (badState++ === 0) badSubscription = String(n.subscriptionId ?? "").slice(0, 80);
        continue;
      }
      goodState++;
      if (typeof n.lifecycleEvent === "string") {
        this.counts.lifecycle++;
        this.options.onRefused("lifecycle notification (renew or recreate the subscription if it says so)", {
          event: n.lifecycleEvent.slice(0, 60),
          subscription: String(n.subscriptionId ?? "").slice(0, 80),
        });
        continue;
      }
      const resource = typeof n.resource === "string" ? n.resource : "";
      if (!resource || !resourceAccepted(resource, this.options.acceptedResources)) {
        this.counts.resourceRefused++;
        this.options.onRefused("resource outside MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES", { resource: resource.slice(0, 200) });
        continue;
      }
      const key = notificationKey(n);
      if (this.recent.seen(key)) {
        this.counts.duplicates++;
        this.options.onRefused("duplicate notification", { resource: resource.slice(0, 200) });
        continue;
      }
      this.counts.accepted++;
      accepted.push({ key, notification: { ...n, resource } });
    }
    // Once per request: a body of a million `{}` from anyone must not write a million log lines.
    if (badState > 0) this.options.onRefused("bad clientState", { notifications: badState, subscription: badSubscription });
    if (list.length > 0 && goodState === 0) {
      return answer(res, 403, { error: { code: "msgraph_webhook.bad_client_state", message: "clientState does not match MSGRAPH_WEBHOOK_CLIENT_STATE" } });
    }
    answer(res, 202);
    if (accepted.length === 0) return;
    // The work runs after the answer has gone.
    const work = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.options.onAccepted(accepted))
      .catch((error) => this.options.onRefused("handling notifications failed", { error: (error as Error).message }));
    this.inFlight.add(work);
    void work.finally(() => this.inFlight.delete(work));
  }
}
