import { join } from "node:path";

/**
 * The file (relative to the home) `agent import` leaves in a restored home whose cron jobs are
 * to be paused: the cron service pauses every job at its next start, before its first tick,
 * then removes it. Shared so the import (daemon/backup) and cron meet here, not in each other's files.
 */
export const CRON_PAUSE_MARKER = join("data", "import-pause-cron.json");
