/**
 * Every config key's default, defined once. `config.yaml` holds only what the user set;
 * the effective config is these defaults overlaid with the file, then with `AGENT_*` env.
 */
export const CONFIG_VERSION = 13;

export const CONFIG_DEFAULTS = deepFreeze({
  _config_version: CONFIG_VERSION,
  model: {
    provider: "" as string,
    base_url: "" as string,
    name: "" as string,
    /** Model used by `/fast`. */
    fast: "" as string,
    /** Seconds a model stream may take to send its first chunk (env AGENT_STREAM_READ_TIMEOUT). */
    stream_read_timeout: 120,
    /** Seconds a model stream may stay silent after its first chunk (env AGENT_STREAM_STALE_TIMEOUT). */
    stream_stale_timeout: 180,
    /** Replaces stream_read_timeout for loopback endpoints (env AGENT_API_TIMEOUT). */
    api_timeout: 1800,
    /** Retries of a model call on 5xx, 429 and dropped streams. */
    max_retries: 3,
    /** First backoff delay in ms (doubled each retry, with jitter). */
    retry_base_ms: 1000,
    /** `coder_app_server`: turns go to a codex app-server (docs/coder-runtime.md); empty: the agent's own loop. */
    vendor_runtime: "" as string,
    /** How the provider is spoken to: chat_completions (default), responses, or coder_app_server (the coder runtime). */
    api_mode: "" as string,
  },
  /** The coder runtime (docs/coder-runtime.md). */
  coder_runtime: {
    /** The codex binary; empty: `codex` on PATH, then $AGENT_HOME/tools. */
    command: "" as string,
    /** Seconds a coder turn may take before it is interrupted. */
    turn_timeout: 600,
    /** Seconds the app-server may stay silent (no question waiting) before it counts as hung and is replaced. */
    silence_timeout: 120,
    /** Approve the app-server's requests where nobody can answer (chat -q, cron, kanban workers). */
    auto_approve: false,
    /** The app-server's CODEX_HOME; empty: $AGENT_HOME/coder/codex-home. */
    codex_home: "" as string,
  },
  providers: {} as Record<
    string,
    { base_url: string; model: string; api_key_env?: string; oauth_issuer?: string; oauth_client_id?: string; oauth_scopes?: string }
  >,
  agent: {
    max_turns: 90,
  },
  display: {
    file_mutation_verifier: true,
    statusbar: true,
    /** The TUI's colours: dark, light, or auto (asks the terminal's background; dark when it cannot tell). */
    theme: "auto" as string,
  },
  gateway: {
    port: 6420,
    host: "127.0.0.1",
    inspector_token: "" as string,
    max_body_bytes: 8 * 1024 * 1024,
    /** Web origins (scheme://host[:port], or *) allowed to call the gateway besides its own. */
    cors_origins: [] as string[],
    /** Host names served besides localhost / 127.0.0.1 / [::1] (DNS-rebinding guard). */
    allowed_hosts: [] as string[],
    /** Required for every call when set, and to reach the product's own actors over HTTP (env AGENT_GATEWAY_TOKEN). */
    token: "" as string,
    /** Open connections (HTTP and WebSocket) at most; 0: sized from the daemon's open-file limit. The oldest idle one goes first when reached. */
    max_connections: 0,
    /** Milliseconds an HTTP connection may stay idle (no request in flight) before it is closed. */
    idle_timeout_ms: 5000,
  },
  /** The local OpenAI-compatible proxy (docs/proxy.md). */
  proxy: {
    /** Start the proxy with the daemon (else `agent proxy start`). */
    enabled: false,
    host: "127.0.0.1",
    port: 8645,
    /** The provider it forwards to (a name under `providers`); "" = the one turns use. */
    provider: "" as string,
    /** Required as the callers' bearer when set; a non-loopback host needs one (env AGENT_PROXY_TOKEN). */
    token: "" as string,
    /** Largest request body accepted; a larger one gets 413. */
    max_body_bytes: 16 * 1024 * 1024,
    /** Seconds to wait for the upstream's response headers before answering 504. */
    upstream_timeout: 120,
    /** Web origins (scheme://host[:port], or *) allowed to call the proxy. */
    cors_origins: [] as string[],
    /** Host names served besides the loopback names (DNS-rebinding guard). */
    allowed_hosts: [] as string[],
  },
  storage: {
    /**
     * What an acknowledged write survives (README "Durable means"): process: a crash or kill -9
     * (a power cut can lose the last seconds of writes); power: a power cut too (fsync before
     * acknowledging). Env AGENT_STORAGE_DURABILITY.
     */
    durability: "process" as "process" | "power",
  },
  backup: {
    /**
     * The archive's deflate level, 1 (fastest) to 9 (smallest); 6 is gzip's own default (what
     * `tar -czf` writes). See docs/backup.md and docs/design.md ("Backups stage the home").
     */
    compression_level: 3,
  },
  logs: {
    level: "info" as "debug" | "info" | "warn" | "error",
    max_bytes: 5 * 1024 * 1024,
    keep: 3,
  },
  kanban: {
    orchestrator_profile: "" as string,
    default_assignee: "" as string,
    auto_decompose: true,
    auto_decompose_per_tick: 3,
    failure_limit: 2,
    /** Seconds between dispatcher ticks (a task becoming ready also starts one). */
    dispatch_interval_seconds: 10,
    /** Running tasks at most, in all and per assignee profile. */
    max_in_progress: 4,
    max_in_progress_per_profile: 2,
    /** Seconds a worker's claim lasts without a heartbeat (kanban_heartbeat extends it); past it the worker is stopped. 0: no limit. */
    claim_ttl_seconds: 3600,
    /** Where a task created without --workspace runs: "" (worktree inside a git repository, else dir), worktree, dir or scratch. */
    default_workspace: "" as "" | "worktree" | "dir" | "scratch",
    /** "required": a completed task with a worktree waits in `review` for approve or reject; "none": done at once. */
    review: "none" as "none" | "required",
  },
  /** Scheduled jobs (README "Cron"). */
  cron: {
    /** IANA time zone of five-field expressions and naive timestamps; empty: the system's. */
    timezone: "" as string,
    /** Seconds a model run may take before it is interrupted (env AGENT_CRON_TIMEOUT). */
    timeout: 600,
    /** Seconds a script run may take before it is killed (env AGENT_CRON_SCRIPT_TIMEOUT). */
    script_timeout: 120,
  },
  lsp: {
    /** Language-server diagnostics after write_file and patch (README "LSP diagnostics"). */
    enabled: true,
    /** block: a write waits for the server's first diagnostics of the new content; settle: and until it has been quiet for 300 ms. */
    wait_mode: "block" as "block" | "settle",
    /** Seconds a write waits for the server's diagnostics of the new content. */
    wait_timeout: 5,
    /** Seconds the first baseline of a server may take (start included); past it the server is marked broken for that project. */
    baseline_timeout: 8,
    /** auto: install a missing server into $AGENT_HOME/lsp on first need; manual: only `agent lsp install`; off: never install. */
    install_strategy: "auto" as "auto" | "manual" | "off",
    /** Per-server overrides by server id (`agent lsp list`). */
    servers: {} as Record<string, LspServerOverride>,
  },
  /**
   * Model slots of auxiliary jobs: each a provider (a name under `providers`) and/or a model
   * overriding the main model's; empty means the main model.
   */
  auxiliary: {
    /** `agent profile describe --auto`. */
    profile_describer: { provider: "" as string, model: "" as string },
    /** Kanban task decomposition. */
    kanban_decomposer: { provider: "" as string, model: "" as string },
  },
  /** The memory tool and the memory block of the system prompt (README "Memory"). */
  memory: {
    enabled: true,
    /** Where entries live: `builtin` is the files in `<profile>/memories/`. */
    provider: "builtin" as "builtin",
    /** Size limit of the agent's notes (MEMORY.md), in characters. */
    memory_char_limit: 2200,
    /** Size limit of the facts about the user (USER.md), in characters. */
    user_char_limit: 1375,
  },
  /** Asking before risky tool calls (docs/approvals.md). */
  approvals: {
    /** ask: every terminal call and file write; smart: dangerous commands and writes outside the workspace; off: never. */
    mode: "smart" as "ask" | "smart" | "off",
    /** What a question nobody can answer (no interactive client: chat -q without a terminal, cron, kanban) gets. */
    non_interactive: "deny" as "deny" | "allow",
    /** Seconds a question waits for an answer before it is denied. */
    timeout: 300,
    /** Extra dangerous commands for smart mode: description → regular expression. */
    dangerous_patterns: {} as Record<string, string>,
  },
  /** The video_generate tool (docs/tools.md "video_generate"). */
  video_gen: {
    /** queue: a queued job API (model families routed by image_url); endpoint: one endpoint for both modalities. */
    provider: "queue" as "queue" | "endpoint",
    /** The model (queue: a family such as pixverse-v6, or family/text-to-video|image-to-video); empty: the provider's default. */
    model: "" as string,
    /** The backend's API base; empty: the provider's public one. */
    base_url: "" as string,
    /** Seconds a job may take, queue and generation together, before the tool gives up (and cancels it). */
    timeout_seconds: 600,
  },
  /** The computer_use tool (docs/computer-use.md): the agent sees and drives an X11 desktop. */
  computer_use: {
    /** Off unless enabled: the tool is then offered to this profile's turns. */
    enabled: false,
    /** The X display to drive (for example :0); empty: a private Xvfb the daemon starts on first use and stops with it. */
    display: "" as string,
    /** The private Xvfb's screen, WIDTHxHEIGHT. */
    screen: "1280x800" as string,
    /** `type` refuses to send more characters than this in one call. */
    max_type_chars: 500,
  },
  /** The x_search tool (docs/tools.md "x_search"). */
  x_search: {
    /** The provider (providers.<name>, with its OAuth issuer) whose sign-in x_search prefers over a key: agent auth login <name>. */
    provider: "xai" as string,
    /** The search vendor's model that runs the search. */
    model: "grok-4-fast" as string,
    /** The vendor's Responses API base; empty: the vendor's public one. */
    base_url: "" as string,
    timeout_seconds: 60,
    /** Retries of a failed call (never of a 429: that fails at once with the vendor's message). */
    retries: 2,
  },
  /** MCP servers by name (docs/mcp.md; fields in shared/config/mcp-schema.ts). */
  mcp_servers: {} as Record<string, McpServerEntry>,
  /** The OpenAI-compatible API server (docs/api-server.md); its key is API_SERVER_KEY in .env. */
  api_server: {
    /** Started by the daemon when true (else `agent api-server start`). */
    enabled: false,
    host: "127.0.0.1",
    port: 8642,
    /** A request body larger than this is refused (413). */
    max_body_bytes: 4 * 1024 * 1024,
    /** Web origins (scheme://host[:port], or *) allowed to call it besides its own. */
    cors_origins: [] as string[],
    /** Host names served besides localhost / 127.0.0.1 / [::1] (DNS-rebinding guard). */
    allowed_hosts: [] as string[],
  },
  /** The messaging channel layer (docs/messaging.md). */
  messaging: {
    /** Seconds between retries of a failed platform call start here and double (to 5 minutes). */
    retry_base_seconds: 1,
    /** Attempts of one platform call before it is given up (logged, counted). */
    retry_attempts: 5,
  },
  /** The Telegram bot (docs/messaging.md). Credentials: TELEGRAM_BOT_TOKEN (or the variable named by token_env). */
  telegram: {
    enabled: false,
    /** The environment variable holding the bot token. */
    token_env: "TELEGRAM_BOT_TOKEN",
    /** polling (default) or webhook (needs webhook_url, reached through a reverse proxy). */
    mode: "polling" as "polling" | "webhook",
    /** The public HTTPS URL Telegram posts to (webhook mode). */
    webhook_url: "",
    /** Where the webhook listener binds (behind the reverse proxy). */
    webhook_host: "127.0.0.1",
    webhook_port: 8443,
    /** The environment variable holding the webhook secret token Telegram sends back in its header. */
    webhook_secret_env: "TELEGRAM_WEBHOOK_SECRET",
    /** An HTTP(S) proxy for the Bot API; the environment variable TELEGRAM_PROXY wins. */
    proxy_url: "",
    /** The Bot API root (a self-hosted Bot API server, or a test fake); empty: Telegram's. */
    api_root: "",
    /** Allowed user ids (direct chats and anywhere). */
    allow_users: [] as string[],
    /** Allowed group/supergroup chat ids (every member may talk). */
    allow_groups: [] as string[],
    /** Development escape hatch (env TELEGRAM_ALLOW_ALL_USERS=true too): everyone is allowed; warned at start. */
    allow_all_users: false,
  },
  /**
   * The LINE bot (docs/messaging.md#line). Credentials and the listener: LINE_CHANNEL_SECRET,
   * LINE_CHANNEL_ACCESS_TOKEN, LINE_WEBHOOK_PORT, LINE_PUBLIC_URL... (shared/config/env.ts).
   * The allowlists add up with LINE_ALLOWED_USERS / _GROUPS / _ROOMS.
   */
  line: {
    enabled: false,
    /** Allowed user ids (U...): one-to-one chats, and anywhere. */
    allow_users: [] as string[],
    /** Allowed group ids (C...): every member may talk. */
    allow_groups: [] as string[],
    /** Allowed room ids (R...): every member may talk. */
    allow_rooms: [] as string[],
    /** Development escape hatch (env LINE_ALLOW_ALL_USERS=true too): everyone is allowed; warned at start. */
    allow_all_users: false,
  },
  /**
   * The Discord bot (docs/messaging.md#discord). Credentials: DISCORD_BOT_TOKEN (or the variable
   * named by token_env). DISCORD_REPLY_TO_MODE, DISCORD_ALLOW_ANY_ATTACHMENT and
   * DISCORD_MAX_ATTACHMENT_BYTES win over the keys below.
   */
  discord: {
    enabled: false,
    /** The environment variable holding the bot token. */
    token_env: "DISCORD_BOT_TOKEN",
    /** The REST API base (a test fake); empty: Discord's. */
    api_root: "",
    /** Allowed user ids (DMs, and guild channels when they mention the bot). */
    allow_users: [] as string[],
    /** Guild channel ids whose every member may talk (when they mention the bot). */
    allow_channels: [] as string[],
    /** Guild channel ids where the bot answers without being mentioned. */
    free_channels: [] as string[],
    /** off, first (the first piece of a reply quotes the message) or all. */
    reply_to_mode: "first" as "off" | "first" | "all",
    /** Accept attachments of any type (default: only images and text files). */
    allow_any_attachment: false,
    /** The largest attachment accepted, in bytes; 0: unlimited. */
    max_attachment_bytes: 32 * 1024 * 1024,
    /** Development escape hatch (env DISCORD_ALLOW_ALL_USERS=true too): everyone is allowed; warned at start. */
    allow_all_users: false,
  },
  /**
   * The Matrix bot (docs/messaging.md#matrix). Credentials: MATRIX_ACCESS_TOKEN (or the variable
   * named by token_env), MATRIX_RECOVERY_KEY for encrypted rooms. MATRIX_HOMESERVER,
   * MATRIX_USER_ID, MATRIX_DEVICE_ID, MATRIX_REQUIRE_MENTION, MATRIX_AUTO_THREAD and
   * MATRIX_DM_MENTION_THREADS win over the keys below.
   */
  matrix: {
    enabled: false,
    /** The homeserver's base URL. */
    homeserver: "",
    /** The bot's user id (@agent:example.org). */
    user_id: "",
    /** The access token's device id (end-to-end encryption needs it). */
    device_id: "",
    /** The environment variable holding the access token. */
    token_env: "MATRIX_ACCESS_TOKEN",
    /** Allowed user ids (their invites are accepted too). */
    allow_users: [] as string[],
    /** Room ids whose every member may talk. */
    allow_rooms: [] as string[],
    /** In rooms, answer only when mentioned (DMs and the bot's threads need no mention). */
    require_mention: true,
    /** Answer a conversation started in a room in a thread: each thread is its own session. */
    auto_thread: true,
    /** In a DM, a message that mentions the bot starts a thread. */
    dm_mention_threads: false,
    /** Development escape hatch (env MATRIX_ALLOW_ALL_USERS=true too): everyone is allowed; warned at start. */
    allow_all_users: false,
  },
  /** Diagnostics (docs/debug-and-update.md). */
  debug: {
    /** Where `agent debug share --upload` POSTs the redacted bundle (http or https); empty: uploading is off. */
    share_url: "" as string,
  },
  /** The daemon's Unix socket (docs/limits.md). */
  socket: {
    /** Open client connections at most; 0: sized from the daemon's open-file limit. The oldest idle one goes first when reached. */
    max_connections: 0,
  },
});

export interface LspServerOverride {
  disabled?: boolean;
  /** The command and its arguments, replacing the resolved executable. */
  command?: string[];
  /** Variables added to the server's environment. */
  env?: Record<string, string>;
  /** Sent as `initializationOptions`, replacing the built-in ones. */
  initialization_options?: Record<string, unknown>;
}

export type AgentConfig = typeof CONFIG_DEFAULTS;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object") {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}

/** One `mcp_servers.<name>` entry as written (docs/mcp.md). */
export interface McpServerEntry {
  command?: string;
  args?: string[];
  env?: Record<string, string>;
  cwd?: string;
  url?: string;
  headers?: Record<string, string>;
  timeout?: number;
  connect_timeout?: number;
  enabled?: boolean;
  supports_parallel_tool_calls?: boolean;
  include_tools?: string[];
  exclude_tools?: string[];
  approve?: "ask" | "off";
}
