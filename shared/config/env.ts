/**
 * Environment overrides of config keys, resolved in this one place: `AGENT_<NAME>` → key path.
 * Values are parsed as the key's default type (number, boolean or string).
 */
export const ENV_OVERRIDES: ReadonlyArray<readonly [env: string, path: string]> = Object.freeze([
  ["AGENT_GATEWAY_PORT", "gateway.port"],
  ["AGENT_GATEWAY_HOST", "gateway.host"],
  ["AGENT_INSPECTOR_TOKEN", "gateway.inspector_token"],
  ["AGENT_GATEWAY_TOKEN", "gateway.token"],
  ["AGENT_FILE_MUTATION_VERIFIER", "display.file_mutation_verifier"],
  ["AGENT_LOG_LEVEL", "logs.level"],
  ["AGENT_STORAGE_DURABILITY", "storage.durability"],
  ["AGENT_MODEL_PROVIDER", "model.provider"],
  ["AGENT_MODEL_BASE_URL", "model.base_url"],
  ["AGENT_MODEL_NAME", "model.name"],
  ["AGENT_MAX_TURNS", "agent.max_turns"],
  ["AGENT_STREAM_READ_TIMEOUT", "model.stream_read_timeout"],
  ["AGENT_API_TIMEOUT", "model.api_timeout"],
  ["AGENT_MODEL_MAX_RETRIES", "model.max_retries"],
  ["AGENT_MODEL_RETRY_BASE_MS", "model.retry_base_ms"],
  ["AGENT_CRON_TIMEOUT", "cron.timeout"],
  ["AGENT_CRON_SCRIPT_TIMEOUT", "cron.script_timeout"],
] as const);

/**
 * Test-only knobs of a real daemon's cron clock (docs/cron.md), never set in production:
 * `AGENT_CRON_CLOCK_OFFSET_MS` starts cron's clock that far ahead of the wall clock (a restart
 * "later"), `AGENT_CRON_CLOCK_RATE` makes it run that many times as fast (schedules of seconds
 * fire in a fraction of the time). A value that is not a number (or a rate not above 0) is ignored.
 */
export function cronTestClock(env: NodeJS.ProcessEnv = process.env): { offsetMs: number; rate: number } {
  const offset = Number(env.AGENT_CRON_CLOCK_OFFSET_MS ?? 0);
  const rate = Number(env.AGENT_CRON_CLOCK_RATE ?? 1);
  return { offsetMs: Number.isFinite(offset) ? offset : 0, rate: Number.isFinite(rate) && rate > 0 ? rate : 1 };
}

/**
 * Environment knobs that are not config keys: the daemon's heap policy (daemon/heap-policy.ts),
 * read once at start-up. `idleCheckMs` is for tests, which shorten the idle checks instead of
 * waiting for them.
 */
export const HEAP_ENV = Object.freeze({
  growingPercent: "AGENT_HEAP_GROWING_PERCENT",
  youngMb: "AGENT_HEAP_YOUNG_MB",
  idleCompact: "AGENT_HEAP_IDLE_COMPACT",
  idleCheckMs: "AGENT_HEAP_IDLE_CHECK_MS",
} as const);
