import type { Feature } from "./context.js";

/**
 * The daemon's features in start order. Each is loaded lazily so a feature's modules cost
 * nothing until boot reaches it. Add a feature here with one line.
 */
export const FEATURES: Array<() => Promise<Feature>> = [
  () => import("./actors/feature/feature.js").then((m) => m.actorsFeature()),
  () => import("./gateway/feature.js").then((m) => m.gatewayFeature()),
  () => import("./profiles/feature.js").then((m) => m.profilesFeature()),
  () => import("./lsp/feature.js").then((m) => m.lspFeature()),
  // Before the agent and cron: no turn can run before the one place that decides risky calls is up.
  () => import("./approvals/feature.js").then((m) => m.approvalsFeature()),
  () => import("./agent/feature.js").then((m) => m.agentFeature()),
  () => import("./computer-use/feature.js").then((m) => m.computerUseFeature()),
  () => import("./kanban/feature.js").then((m) => m.kanbanFeature()),
  () => import("./cron/feature.js").then((m) => m.cronFeature()),
  () => import("./backup/feature.js").then((m) => m.backupFeature()),
  () => import("./mcp/feature.js").then((m) => m.mcpFeature()),
  () => import("./auth/feature.js").then((m) => m.authFeature()),
  () => import("./proxy/feature.js").then((m) => m.proxyFeature()),
  () => import("./api-server/feature.js").then((m) => m.apiServerFeature()),
  () => import("./messaging/feature.js").then((m) => m.messagingFeature()),
  () => import("./debug/feature.js").then((m) => m.debugFeature()),
  () => import("./dashboard/feature.js").then((m) => m.dashboardFeature()),
];
