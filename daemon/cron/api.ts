import type { CronJob } from "../../shared/protocol/cron.js";

/**
 * What the cron feature offers other features through the service registry
 * (`services.get("cron")`): deleting a profile asks which jobs name it and drops its table.
 * CronService (daemon/cron/cron-service.ts) implements it.
 */
export interface CronApi {
  /** The profile's jobs (none when its table was never opened). */
  jobsOf(profile: string): Promise<CronJob[]>;
  /** Drop the profile's table; refuses while one of its jobs runs. Returns the ids dropped. */
  dropProfile(profile: string): Promise<string[]>;
}

/** The schedule grammar (`every 5m`, cron expressions, …), for whoever checks a job before cron has it (a distribution's jobs). */
export { parseSchedule } from "./schedule.js";
