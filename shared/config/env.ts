/**
 * Environment overrides of config keys, resolved in this one place: `AGENT_<NAME>` → key path.
 * Values are parsed as the key's default type (number, boolean or string).
 */
const OVERRIDES = [
  ["AGENT_GATEWAY_PORT", "gateway.port"],
  ["AGENT_GATEWAY_HOST", "gateway.host"],
  ["AGENT_INSPECTOR_TOKEN", "gateway.inspector_token"],
  ["AGENT_GATEWAY_TOKEN", "gateway.token"],
  ["AGENT_PROXY_HOST", "proxy.host"],
  ["AGENT_PROXY_PORT", "proxy.port"],
  ["AGENT_PROXY_TOKEN", "proxy.token"],
  ["AGENT_FILE_MUTATION_VERIFIER", "display.file_mutation_verifier"],
  ["AGENT_LOG_LEVEL", "logs.level"],
  ["AGENT_STORAGE_DURABILITY", "storage.durability"],
  ["AGENT_MODEL_PROVIDER", "model.provider"],
  ["AGENT_MODEL_BASE_URL", "model.base_url"],
  ["AGENT_MODEL_NAME", "model.name"],
  ["AGENT_MAX_TURNS", "agent.max_turns"],
  ["AGENT_STREAM_READ_TIMEOUT", "model.stream_read_timeout"],
  ["AGENT_STREAM_STALE_TIMEOUT", "model.stream_stale_timeout"],
  ["AGENT_API_TIMEOUT", "model.api_timeout"],
  ["AGENT_MODEL_MAX_RETRIES", "model.max_retries"],
  ["AGENT_MODEL_RETRY_BASE_MS", "model.retry_base_ms"],
  ["AGENT_CRON_TIMEOUT", "cron.timeout"],
  ["AGENT_CRON_SCRIPT_TIMEOUT", "cron.script_timeout"],
  // Not AGENT_KANBAN_*: those are a worker's own and never reach a daemon it starts.
  ["AGENT_DEFAULT_WORKSPACE", "kanban.default_workspace"],
] as const;
export const ENV_OVERRIDES: ReadonlyArray<readonly [env: string, path: string]> = Object.freeze(OVERRIDES);

/**
 * Who an environment variable is for: `user` (documented settings and credentials), `process`
 * (set by the product for a process it starts: a kanban worker, a cron script), `test` (knobs
 * that shorten waits or limits so tests and benchmarks run fast; not for users).
 */
export type EnvUse = "user" | "process" | "test";

/**
 * Every `AGENT_*` variable the product reads, besides the config overrides above: the one table.
 * Code reads them with envValue/envNumber/envFlag below, never `process.env.AGENT_*` directly
 * (test/foundation/env-table.test.ts checks both).
 */
export const ENV_VARS = {
  AGENT_HOME: { use: "user", about: "The home the daemon owns (default ~/.agent)." },
  AGENT_PROFILE: { use: "user", about: "The profile a command runs as (the CLI's -p/--profile sets it)." },
  AGENT_DEBUG: { use: "user", about: "1: print stack traces of unexpected errors (as --debug)." },
  AGENT_API_KEY: { use: "user", about: "The model provider's API key when the provider names no key variable of its own." },
  AGENT_ENV: { use: "user", about: "production: the actor inspector needs its token (AGENT_INSPECTOR_TOKEN) or is disabled." },
  AGENT_IMPORT_MAX_BYTES: { use: "user", about: "agent import: refuse an archive whose files add up to more bytes (as --max-bytes)." },
  AGENT_IMPORT_MAX_FILES: { use: "user", about: "agent import: refuse an archive with more files (as --max-files)." },
  AGENT_IMPORT_MAX_FILE_BYTES: { use: "user", about: "agent import: refuse an archive with a larger file (as --max-file-bytes)." },
  AGENT_BACKUP_FOLLOW_MAX_FILES: { use: "user", about: "agent backup: at most this many files behind followed links." },
  AGENT_BACKUP_FOLLOW_MAX_BYTES: { use: "user", about: "agent backup: at most this many bytes behind followed links." },
  AGENT_UPDATE_INSTALL_COMMAND: {
    use: "user",
    about: 'agent update (git install): the dependency install command, a JSON array (default ["npm","ci"]).',
  },
  AGENT_UPDATE_BUILD_COMMAND: { use: "user", about: 'agent update (git install): the build command, a JSON array (default ["npm","run","build"]).' },
  AGENT_UPDATE_NPM: { use: "user", about: "agent update: the npm executable (default npm on PATH); its config (registry, prefix) applies." },
  AGENT_SETUP_TIMEOUT: { use: "user", about: "Seconds agent setup's model listing and test call may take (default 30; slow local servers)." },
  AGENT_ACTORS_MAX_IDLE_AWAKE: {
    use: "user",
    about: "Idle actors kept awake at most (default 250); past it the longest-awake idle ones sleep before their timeout. 0: no cap.",
  },
  AGENT_ACTORS_RUNNER: { use: "user", about: "inline: run user actor modules in the daemon's thread, not in worker threads (benchmarks)." },
  API_SERVER_KEY: { use: "user", about: "The API server's key: required as a bearer when set, and to bind it to a non-loopback address (docs/api-server.md)." },
  API_SERVER_MODEL_NAME: {
    use: "user",
    about: "The model id the API server advertises for the default profile (default: agent); in a profile's .env, for that profile.",
  },
  AGENT_CUA_DRIVER_VERSION: {
    use: "user",
    about: "Pins the computer_use driver version (agent computer-use install): the Debian packages' versions are checked against it.",
  },
  AGENT_KANBAN_TASK: { use: "process", about: "Set by the dispatcher for a kanban worker: its task id." },
  AGENT_KANBAN_RUN_ID: { use: "process", about: "Set by the dispatcher for a kanban worker: its run id." },
  AGENT_KANBAN_BOARD: { use: "process", about: "Set by the dispatcher for a kanban worker: its task's board." },
  AGENT_KANBAN_EXIT_FILE: { use: "process", about: "Set by the dispatcher for a kanban worker: where its wrapper writes the exit code." },
  AGENT_KANBAN_PID_FILE: { use: "process", about: "Set by the dispatcher for a kanban worker: where its wrapper writes its pid." },
  AGENT_CRON_JOB: { use: "process", about: "Set for a cron script: the id of its job." },
  AGENT_CODER_API_KEY: {
    use: "process",
    about: "Set by the daemon for the coder runtime's codex app-server: the provider's API key (config.toml names it, never holds it).",
  },
  AGENT_RPC_GRACE_MS: { use: "test", about: "How long in-flight calls may finish at shutdown before connections drop (default 10 s)." },
  AGENT_DAEMON_START_TIMEOUT_MS: { use: "test", about: "How long a client waits for a daemon it started to be ready (default 15 s)." },
  AGENT_WORKER_RECONNECT_MS: { use: "test", about: "How long a kanban worker keeps reconnecting to a restarting daemon." },
  AGENT_RUNNER_WATCHDOG_MS: { use: "test", about: "The actor runner's watchdog (a user module's turn that blocks the thread longer is stopped)." },
  AGENT_RUNNER_MAX_MEMORY_MB: { use: "test", about: "The actor runner's heap limit per worker thread." },
  AGENT_PROXY_TEST_CRASH: {
    use: "test",
    about: "1: a request to the proxy for /test/crash ends the proxy's thread with an uncaught error (the crashed-thread test).",
  },
  AGENT_HOME_CHECK_MS: { use: "test", about: "How often the daemon checks that its home (its lock file) is still there (default 5000)." },
  AGENT_ACTORS_WATCH: { use: "test", about: "0: do not watch the user actor modules' folder for changes." },
  AGENT_SEARCH_LOAD_PAUSE_MS: {
    use: "test",
    about: "A pause between the session search index's snapshot lines as it loads, so a test searches during the load.",
  },
  AGENT_PROFILE_INSTALL_PAUSE_MS: { use: "test", about: "A pause inside a profile install, so a test can kill the daemon mid-way." },
  AGENT_CRON_CLOCK_OFFSET_MS: {
    use: "test",
    about: 'Starts cron\'s clock this far ahead of the wall clock (a restart "later"), so a test reaches a schedule without waiting.',
  },
  AGENT_CRON_CLOCK_RATE: { use: "test", about: "Runs cron's clock this many times as fast, so schedules of seconds fire in a fraction of the time." },
  AGENT_CRON_KEEP_RUNS: { use: "test", about: "Runs kept per cron job (default 200), so a test sees pruning after a few runs." },
  AGENT_HEAP_GROWING_PERCENT: { use: "test", about: "The daemon's heap growth policy (V8's --heap-growing-percent)." },
  AGENT_HEAP_YOUNG_MB: { use: "test", about: "The daemon's young generation size in MB." },
  AGENT_HEAP_IDLE_COMPACT: { use: "test", about: "1: a compacting heap collection when the daemon is idle (off by default)." },
  AGENT_HEAP_IDLE_CHECK_MS: { use: "test", about: "How often the idle heap compaction checks (shortened by tests instead of waiting)." },
  AGENT_MCP_BACKOFF_MS: { use: "test", about: "The first restart delay of an MCP server that exited (default 1 s, doubling to 30 s)." },
  AGENT_TUI_DEV_HEIGHT: { use: "test", about: "Rows of the TUI's developer panel." },
  AGENT_TUI_FIRST_FRAME_FILE: { use: "test", about: "The TUI writes the time of its first frame there (start-up benchmark)." },
  // The LINE adapter (docs/messaging.md#line). Not AGENT_*: the names LINE's own docs and other bots use.
  LINE_CHANNEL_SECRET: { use: "user", about: "LINE: the channel secret; the webhook's HMAC-SHA256 signature is checked with it." },
  LINE_CHANNEL_ACCESS_TOKEN: { use: "user", about: "LINE: the channel access token the Messaging API is called with." },
  LINE_ALLOWED_USERS: { use: "user", about: "LINE: user ids (U...) allowed to talk to the agent, comma-separated." },
  LINE_ALLOWED_GROUPS: { use: "user", about: "LINE: group ids (C...) whose messages are answered, comma-separated." },
  LINE_ALLOWED_ROOMS: { use: "user", about: "LINE: room ids (R...) whose messages are answered, comma-separated." },
  LINE_ALLOW_ALL_USERS: { use: "user", about: "LINE: true lets everyone in (a development escape hatch; warned about at start)." },
  LINE_PUBLIC_URL: { use: "user", about: "LINE: the public https base URL media links are built on (behind a reverse proxy)." },
  LINE_WEBHOOK_PORT: { use: "user", about: "LINE: the webhook listener's own port (unset: mounted on the gateway under /line/)." },
  LINE_WEBHOOK_HOST: { use: "user", about: "LINE: the address the webhook listener's own port binds (default 127.0.0.1)." },
  LINE_SLOW_RESPONSE_THRESHOLD: { use: "user", about: "LINE: seconds before a slow answer is offered behind a get-answer button (default 45; 0 disables)." },
  LINE_INTERRUPTED_TEXT: { use: "user", about: "LINE: what a get-answer button gives when its run was cancelled or the daemon restarted." },
  LINE_API_BASE_URL: { use: "test", about: "LINE: the Messaging API's base URL (a local fake in tests)." },
  // Teams meeting-summary delivery and the Graph change-notification listener (docs/messaging.md#teams). Not AGENT_*: the spec's names.
  TEAMS_DELIVERY_MODE: {
    use: "user",
    about: "Teams: graph (post through Microsoft Graph) or incoming_webhook (an Adaptive Card to a webhook URL); set: Teams starts.",
  },
  TEAMS_GRAPH_ACCESS_TOKEN: {
    use: "user",
    about: "Teams: the Graph access token (ChannelMessage.Send / ChatMessage.Send; transcripts) of graph mode and the listener.",
  },
  TEAMS_TEAM_ID: { use: "user", about: "Teams: the team of the channel summaries go to (graph mode, with TEAMS_CHANNEL_ID)." },
  TEAMS_CHANNEL_ID: { use: "user", about: "Teams: the channel summaries go to (graph mode, with TEAMS_TEAM_ID)." },
  TEAMS_CHAT_ID: { use: "user", about: "Teams: the chat summaries go to (graph mode, instead of a team channel)." },
  TEAMS_INCOMING_WEBHOOK_URL: { use: "user", about: "Teams: the incoming webhook's URL (a secret) Adaptive Cards are posted to (incoming_webhook mode)." },
  TEAMS_GRAPH_BASE_URL: { use: "user", about: "Teams: the Graph root (default https://graph.microsoft.com; a national cloud, or a local fake in tests)." },
  MSGRAPH_WEBHOOK_ENABLED: { use: "user", about: "Graph change notifications: true starts the listener on its own port." },
  MSGRAPH_WEBHOOK_PORT: { use: "user", about: "Graph change notifications: the listener's port (required when enabled; 0 picks a free one)." },
  MSGRAPH_WEBHOOK_HOST: {
    use: "user",
    about: "Graph change notifications: the address the listener binds (default 127.0.0.1; a public one needs a client state).",
  },
  MSGRAPH_WEBHOOK_CLIENT_STATE: {
    use: "user",
    about: "Graph change notifications: the subscription's clientState; each notification must carry it (constant-time check).",
  },
  MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES: {
    use: "user",
    about: "Graph change notifications: resources handled (comma-separated, * wildcards, prefixes); others are dropped.",
  },
  MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS: {
    use: "user",
    about: "Graph change notifications: source networks allowed (comma-separated CIDRs); others get 403. Empty: any.",
  },
  // The Discord adapter (docs/messaging.md#discord).
  DISCORD_BOT_TOKEN: { use: "user", about: "Discord: the bot token (discord.token_env names another variable)." },
  DISCORD_REPLY_TO_MODE: {
    use: "user",
    about: "Discord: off, first (default) or all: which reply pieces quote the message they answer; wins over discord.reply_to_mode.",
  },
  DISCORD_ALLOW_ANY_ATTACHMENT: {
    use: "user",
    about: "Discord: true accepts attachments of any type, not only images and text files; wins over discord.allow_any_attachment.",
  },
  DISCORD_MAX_ATTACHMENT_BYTES: {
    use: "user",
    about: "Discord: the largest attachment accepted, in bytes (0: unlimited); wins over discord.max_attachment_bytes.",
  },
  DISCORD_ALLOW_ALL_USERS: { use: "user", about: "Discord: true lets everyone in (a development escape hatch; warned about at start)." },
  // The Matrix adapter (docs/messaging.md#matrix).
  MATRIX_HOMESERVER: { use: "user", about: "Matrix: the homeserver's base URL (https://matrix.example.org); wins over matrix.homeserver." },
  MATRIX_USER_ID: { use: "user", about: "Matrix: the bot's user id (@agent:example.org); wins over matrix.user_id." },
  MATRIX_ACCESS_TOKEN: { use: "user", about: "Matrix: the bot's access token (matrix.token_env names another variable)." },
  MATRIX_DEVICE_ID: { use: "user", about: "Matrix: the access token's device id (needed for end-to-end encryption); wins over matrix.device_id." },
  MATRIX_REQUIRE_MENTION: { use: "user", about: "Matrix: true (default): in rooms the bot answers only when mentioned (DMs and its threads need none)." },
  MATRIX_AUTO_THREAD: { use: "user", about: "Matrix: true (default): a conversation started in a room is answered in a thread, each thread its own session." },
  MATRIX_DM_MENTION_THREADS: { use: "user", about: "Matrix: true: a DM message that mentions the bot starts a thread (default false)." },
  MATRIX_RECOVERY_KEY: { use: "user", about: "Matrix: the recovery key that restores the bot's end-to-end keys from the server's key backup." },
  MATRIX_ALLOW_ALL_USERS: { use: "user", about: "Matrix: true lets everyone in (a development escape hatch; warned about at start)." },
  AGENT_DAEMON_STDERR_MAX_BYTES: { use: "test", about: "The size at which logs/daemon-stderr.log rotates (default logs.max_bytes' default, 5 MB)." },
} as const satisfies Record<string, { use: EnvUse; about: string }>;

/** A variable of the table, or one of the config overrides. */
export type EnvName = keyof typeof ENV_VARS | (typeof OVERRIDES)[number][0];

/** The variable's value as set (undefined when unset). */
export function envValue(name: EnvName, env: NodeJS.ProcessEnv = process.env): string | undefined {
  return env[name];
}

/** True when the variable is set to `1` or `true`. */
export function envFlag(name: EnvName, env: NodeJS.ProcessEnv = process.env): boolean {
  const v = env[name]?.trim().toLowerCase();
  return v === "1" || v === "true";
}

/**
 * The variable as a number; `fallback` when it is unset, blank, not a finite number or outside
 * what `check` accepts.
 */
export function envNumber(name: EnvName, fallback: number, check: (n: number) => boolean = () => true, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const n = Number(raw);
  return Number.isFinite(n) && check(n) ? n : fallback;
}

/**
 * The test-only knobs of a real daemon's cron clock (docs/cron.md), never set in production. A
 * value that is not a number (or a rate not above 0) is ignored.
 */
export function cronTestClock(env: NodeJS.ProcessEnv = process.env): { offsetMs: number; rate: number } {
  return {
    offsetMs: envNumber("AGENT_CRON_CLOCK_OFFSET_MS", 0, () => true, env),
    rate: envNumber("AGENT_CRON_CLOCK_RATE", 1, (n) => n > 0, env),
  };
}
