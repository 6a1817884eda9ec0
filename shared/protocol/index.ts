import type { z } from "zod";
import { actorsMethods } from "./actors.js";
import { chatMethods } from "./chat.js";
import { configMethods } from "./config.js";
import { daemonMethods } from "./daemon.js";
import { skillsMethods } from "./skills.js";
import type { MethodSpec } from "./define.js";
import { profilesMethods } from "./profiles.js";
import { lspMethods } from "./lsp.js";
import { kanbanMethods } from "./kanban.js";
import { sessionsMethods } from "./sessions.js";
import { cronMethods } from "./cron.js";
import { approvalsMethods } from "./approvals.js";
import { setupMethods } from "./setup.js";
import { mcpMethods } from "./mcp.js";
import { coderMethods } from "./coder.js";
import { authMethods } from "./auth.js";
import { proxyMethods } from "./proxy.js";
import { apiServerMethods } from "./api-server.js";
import { messagingMethods } from "./messaging.js";
import { debugMethods } from "./debug.js";
import { computerUseMethods } from "./computer-use.js";
import { dashboardMethods } from "./dashboard.js";

/** The daemon's whole RPC surface: one table, typed on both sides. */
export const methods = {
  ...daemonMethods,
  ...configMethods,
  ...actorsMethods,
  ...chatMethods,
  ...profilesMethods,
  ...skillsMethods,
  ...lspMethods,
  ...kanbanMethods,
  ...sessionsMethods,
  ...cronMethods,
  ...approvalsMethods,
  ...setupMethods,
  ...mcpMethods,
  ...coderMethods,
  ...authMethods,
  ...proxyMethods,
  ...apiServerMethods,
  ...messagingMethods,
  ...debugMethods,
  ...computerUseMethods,
  ...dashboardMethods,
};

export type Methods = typeof methods;
export type MethodName = keyof Methods;
export type Params<M extends MethodName> = Methods[M] extends MethodSpec<infer P, unknown> ? z.input<P> : never;
export type ParsedParams<M extends MethodName> = Methods[M] extends MethodSpec<infer P, unknown> ? z.output<P> : never;
export type Result<M extends MethodName> = Methods[M] extends MethodSpec<z.ZodType, infer R> ? R : never;

export type Handler<M extends MethodName> = (params: ParsedParams<M>, call: CallContext) => Promise<Result<M>> | Result<M>;
export type Handlers = { [M in MethodName]: Handler<M> };

/** What a handler knows about the call it serves. */
export interface CallContext {
  connectionId: number;
  /** The profile the connection runs as (chosen at `initialize`; `default` is the home). */
  profile: string;
  /** Aborted when the client cancels the request or disconnects. */
  signal: AbortSignal;
  /** Push a notification to this connection only (progress, streamed deltas). */
  notify(topic: string, data: unknown): void;
}

export * from "./events.js";
export type * from "./daemon.js";
