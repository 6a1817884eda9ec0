import type { Feature } from "./context.js";
import { actorsFeature } from "./actors/feature/feature.js";
import { agentFeature } from "./agent/feature.js";
import { apiServerFeature } from "./api-server/feature.js";
import { approvalsFeature } from "./approvals/feature.js";
import { authFeature } from "./auth/feature.js";
import { backupFeature } from "./backup/feature.js";
import { computerUseFeature } from "./computer-use/feature.js";
import { cronFeature } from "./cron/feature.js";
import { dashboardFeature } from "./dashboard/feature.js";
import { debugFeature } from "./debug/feature.js";
import { gatewayFeature } from "./gateway/feature.js";
import { kanbanFeature } from "./kanban/feature.js";
import { lspFeature } from "./lsp/feature.js";
import { mcpFeature } from "./mcp/feature.js";
import { messagingFeature } from "./messaging/feature.js";
import { profilesFeature } from "./profiles/feature.js";
import { proxyFeature } from "./proxy/feature.js";

/**
 * The daemon's features in start order. Add a feature here with one line.
 *
 * Every start builds every feature, so their modules are imported statically: one dynamic
 * `import()` each made the bundler (scripts/bundle.mjs) split the daemon into a chunk per set of
 * features sharing code: a start loaded 72 files instead of 20 (~12% of its CPU). What
 * a feature needs only on first use (an SDK, a parser, a thread pool) stays behind an `import()`
 * in the feature itself.
 */
export const FEATURES: Array<() => Promise<Feature>> = [
  async () => actorsFeature(),
  async () => gatewayFeature(),
  async () => profilesFeature(),
  async () => lspFeature(),
  // Before the agent and cron: no turn can run before the one place that decides risky calls is up.
  async () => approvalsFeature(),
  async () => agentFeature(),
  async () => computerUseFeature(),
  async () => kanbanFeature(),
  async () => cronFeature(),
  async () => backupFeature(),
  async () => mcpFeature(),
  async () => authFeature(),
  async () => proxyFeature(),
  async () => apiServerFeature(),
  async () => messagingFeature(),
  async () => debugFeature(),
  async () => dashboardFeature(),
];
