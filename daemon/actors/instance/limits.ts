/** Limits and defaults of one actor, defined once. */
export const ACTOR_LIMITS = Object.freeze({
  sleepTimeoutMs: 30_000,
  actionTimeoutMs: 60_000,
  queueMaxSize: 1000,
  queueMaxMessageBytes: 64 * 1024,
  inputMaxBytes: 4 * 1024 * 1024,
  /** How long a sleep waits for in-flight calls before aborting them. */
  sleepGraceMs: 5_000,
  /**
   * Idle actors kept awake at most, daemon-wide: past it the longest-awake idle ones sleep
   * before their timeout (runtime/idle-awake-cap.ts). `AGENT_ACTORS_MAX_IDLE_AWAKE` sets it.
   */
  maxIdleAwake: 250,
});
