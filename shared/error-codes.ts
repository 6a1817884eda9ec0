/**
 * Every error code of the product, with what it means outside the process that raised it: the
 * CLI's exit code and the gateway's HTTP status. `cli/exit-codes.ts` and
 * `daemon/gateway/http-error.ts` read this table and nothing else; a code that is missing here
 * (an actor's own `user.<code>`, say) gets the defaults: exit 1, HTTP 400, or 500 for the
 * `internal` group. `test/errors/error-codes.test.ts` checks that every code the source
 * raises is listed.
 */
import { AgentError } from "./errors.js";

/** Exit codes of the CLI and of a kanban worker. */
export const EXIT = Object.freeze({
  ok: 0,
  failure: 1,
  usage: 2,
  notRunning: 3,
  notFound: 4,
  protocolMismatch: 5,
  unavailable: 69,
  /** Rate limited: a kanban worker exiting with this goes back to ready. */
  rateLimited: 75,
  interrupted: 130,
});

export interface ErrorCodeInfo {
  exit: number;
  http: number;
}

const { failure, usage, notRunning, notFound, protocolMismatch, unavailable, rateLimited, interrupted } = EXIT;

/** code → [exit code, HTTP status]. */
const CODES = {
  "action.cancelled": [interrupted, 400],
  "approvals.not_found": [notFound, 404],
  "action.not_found": [notFound, 400],
  "action.timed_out": [failure, 400],
  "actor.crashed": [failure, 400],
  "actor.duplicate_key": [failure, 400],
  "actor.input_too_large": [failure, 400],
  "actor.key_too_large": [failure, 400],
  "actor.module_exists": [failure, 400],
  "actor.module_failed": [failure, 400],
  "actor.name_not_found": [notFound, 400],
  "actor.not_found": [notFound, 400],
  "actor.reserved_name": [failure, 400],
  "actor.runner_failed": [failure, 400],
  "actor.runner_unavailable": [failure, 400],
  "api.bad_request": [usage, 400],
  "auth.forbidden_host": [failure, 403],
  "auth.forbidden_origin": [failure, 403],
  "auth.unauthorized": [failure, 401],
  // A source address outside a listener's allowed networks (access.ts SourceNetworks).
  "auth.forbidden_source": [failure, 403],
  // Provider sign-in (daemon/models/credentials.ts, docs/auth.md).
  "auth.sign_in_again": [failure, 401],
  "auth.not_signed_in": [failure, 401],
  "auth.bad_file": [failure, 500],
  "auth.refresh_failed": [unavailable, 502],
  "auth.issuer_unreachable": [unavailable, 502],
  "auth.login_failed": [failure, 400],
  "auth.no_issuer": [usage, 400],
  // agent debug share, agent update (docs/debug-and-update.md).
  "debug.share_url_unset": [failure, 400],
  "debug.upload_failed": [failure, 502],
  "update.local_changes": [failure, 400],
  "update.not_on_main": [failure, 400],
  "update.diverged": [failure, 400],
  "update.step_failed": [failure, 500],
  "update.check_failed": [failure, 502],
  "update.failed": [failure, 500],
  // Backups (agent backup, agent import).
  "backup.daemon_running": [failure, 400],
  "backup.failed": [failure, 500],
  "backup.home_not_empty": [failure, 400],
  "backup.invalid_archive": [failure, 400],
  // Skill bundles ($AGENT_HOME/skill-bundles/).
  "bundles.exists": [failure, 400],
  "bundles.invalid": [usage, 400],
  "bundles.invalid_name": [usage, 400],
  "bundles.not_found": [notFound, 400],
  "chat.busy": [failure, 400],
  "chat.image_not_found": [notFound, 400],
  "chat.interrupted": [interrupted, 400],
  "chat.invalid_image": [failure, 400],
  "chat.invalid_session_id": [failure, 400],
  "chat.session_not_found": [failure, 400],
  "chat.turn_failed": [failure, 400],
  "config.invalid_value": [usage, 400],
  "config.invalid_yaml": [failure, 400],
  "config.no_migration": [failure, 400],
  "config.not_a_value": [usage, 400],
  "config.secret_key": [usage, 400],
  "config.unknown_key": [usage, 400],
  "config.version_too_new": [failure, 400],
  "config.version_unsupported": [failure, 400],
  "cron.invalid_job": [failure, 400],
  "cron.invalid_schedule": [failure, 400],
  "cron.job_not_found": [failure, 400],
  "cron.job_running": [failure, 400],
  "daemon.already_running": [failure, 400],
  "messaging.no_adapter": [failure, 400],
  "messaging.no_chat": [failure, 400],
  "messaging.unknown_platform": [usage, 400],
  "messaging.platform_error": [failure, 502],
  "daemon.connect_failed": [failure, 400],
  "daemon.disconnected": [failure, 400],
  "daemon.lock_failed": [failure, 400],
  "daemon.not_running": [notRunning, 400],
  "daemon.socket_path_too_long": [unavailable, 400],
  "daemon.start_failed": [unavailable, 400],
  "daemon.start_timeout": [unavailable, 400],
  "daemon.stop_timeout": [failure, 400],
  "daemon.stopping": [failure, 400],
  "encoding.invalid": [failure, 400],
  "gateway.listen_failed": [failure, 400],
  "gateway.port_denied": [failure, 400],
  "gateway.port_in_use": [failure, 400],
  "gateway.not_running": [unavailable, 503],
  "handler.request_not_defined": [failure, 404],
  "handler.websocket_not_defined": [failure, 404],
  "internal.error": [failure, 500],
  // Kanban boards: every refusal exits 1 and changes nothing.
  "kanban.board_not_found": [failure, 404],
  "kanban.cycle": [failure, 400],
  "kanban.decomposer_unavailable": [failure, 503],
  "kanban.dispatcher_unavailable": [failure, 503],
  "kanban.invalid_argument": [failure, 400],
  "kanban.invalid_board_name": [failure, 400],
  "kanban.invalid_plan": [failure, 400],
  "kanban.invalid_transition": [failure, 409],
  "kanban.not_linked": [failure, 400],
  "kanban.not_your_task": [failure, 403],
  "kanban.parents_unfinished": [failure, 409],
  "kanban.run_not_found": [failure, 404],
  "kanban.running_refused": [failure, 400],
  "kanban.self_link": [failure, 400],
  "kanban.summary_required": [failure, 400],
  "kanban.task_not_found": [failure, 404],
  "kanban.unknown_profile": [failure, 400],
  "internal.runtime_unavailable": [failure, 500],
  "logs.not_found": [notFound, 400],
  // Memory of a profile (<profile>/memories/).
  "memory.write_failed": [failure, 400],
  "lsp.install_disabled": [failure, 400],
  "computer_use.driver_pinned": [failure, 400],
  "computer_use.install_failed": [unavailable, 400],
  "lsp.install_failed": [unavailable, 400],
  "lsp.protocol_error": [failure, 400],
  "lsp.server_unavailable": [unavailable, 400],
  "lsp.start_failed": [unavailable, 400],
  "lsp.unknown_server": [notFound, 400],
  "model.bad_request": [failure, 400],
  "model.bad_stream": [failure, 400],
  "model.connection_failed": [failure, 400],
  "model.missing_api_key": [failure, 400],
  "model.no_fast_model": [failure, 400],
  "model.not_configured": [failure, 400],
  "model.not_found": [notFound, 400],
  "model.rate_limited": [rateLimited, 400],
  "model.server_error": [failure, 400],
  "model.stream_timeout": [failure, 400],
  "model.unauthorized": [failure, 400],
  "model.unknown_provider": [failure, 400],
  // The tool pool's failures; tools turn them into results the model reads.
  "pool.aborted": [failure, 400],
  "pool.closed": [failure, 400],
  "pool.task_failed": [failure, 400],
  "pool.timeout": [failure, 400],
  "pool.worker_missing": [failure, 400],
  "profile.clone_failed": [failure, 400],
  "profile.confirmation_required": [failure, 400],
  "profile.exists": [failure, 400],
  "profile.in_use": [failure, 400],
  "profile.incompatible": [failure, 400],
  "profile.invalid_distribution": [failure, 400],
  "profile.invalid_meta": [failure, 400],
  "profile.invalid_name": [failure, 400],
  "profile.not_found": [notFound, 400],
  "profile.not_installed": [failure, 400],
  "profile.reserved_name": [failure, 400],
  "profile.source_not_found": [notFound, 400],
  "profile.unsafe_distribution": [failure, 400],
  "queue.full": [failure, 400],
  "queue.message_too_large": [failure, 400],
  "line.bad_signature": [failure, 401],
  "line.media_refused": [usage, 403],
  "line.media_not_found": [notFound, 404],
  "line.api_error": [unavailable, 502],
  "request.aborted": [failure, 400],
  "request.body_too_large": [failure, 413],
  "request.invalid": [failure, 400],
  "route.not_found": [notFound, 404],
  "rpc.bad_framing": [failure, 400],
  "rpc.cancelled": [interrupted, 400],
  "rpc.disconnected": [failure, 400],
  "rpc.error": [failure, 400],
  "rpc.invalid_params": [usage, 400],
  "rpc.invalid_request": [failure, 400],
  "rpc.message_too_large": [failure, 400],
  "rpc.method_not_found": [failure, 400],
  "rpc.not_initialized": [failure, 400],
  "rpc.parse_error": [failure, 400],
  "rpc.protocol_mismatch": [protocolMismatch, 400],
  "rpc.unserializable_result": [failure, 500],
  // Skills of a profile (<profile>/skills/).
  // Session history (agent sessions, session_search).
  "sessions.invalid_argument": [usage, 400],
  "skills.not_found": [notFound, 400],
  // The disk refused a write (the call that needed it changed nothing): 507 Insufficient
  // Storage for a full disk, 503 for a store the daemon may not write (fixable by the admin).
  "storage.disk_full": [failure, 507],
  "storage.permission_denied": [failure, 503],
  "storage.read_only": [failure, 503],
  "storage.write_failed": [failure, 500],
  // A file lock (daemon/store/file-lock.ts) another live process held too long.
  "storage.lock_timeout": [unavailable, 503],
  "store.corrupt": [failure, 400],
  "store.no_migration": [failure, 400],
  "store.refused_empty_write": [failure, 400],
  "store.version_too_new": [failure, 400],
  "store.wrong_kind": [failure, 400],
  "systemd.remove_failed": [failure, 400],
  "systemd.write_failed": [failure, 400],
  // A tool failed in a way the model can act on (its `reason` is the code the model reads).
  "tool.failed": [failure, 400],
  "usage.invalid": [usage, 400],
  "usage.missing_subcommand": [usage, 400],
  "usage.missing_value": [usage, 400],
  "usage.unknown_command": [usage, 400],
  "usage.unknown_flag": [usage, 400],
  "workflow.entry_not_found": [notFound, 400],
  "workflow.not_enabled": [failure, 400],
  // kanban-safety: a built-in actor is destroyed through its feature's command, never actors.destroy.
  "actor.builtin_refused": [failure, 403],
  // kanban-safety: a plan file that cannot be created as a whole; release of a task that is not held.
  "kanban.invalid_plan_file": [failure, 400],
  "kanban.not_held": [failure, 409],
  "kanban.board_in_use": [failure, 409],
  // issue 30: git worktrees, review, merge, the live process view.
  "kanban.git_failed": [failure, 409],
  "kanban.not_a_repo": [failure, 400],
  "kanban.no_worktree": [failure, 409],
  "kanban.dirty_tree": [failure, 409],
  "kanban.merge_conflict": [failure, 409],
  "kanban.not_running": [failure, 409],
  // agent import (daemon/backup/import.ts)
  "backup.confirmation_required": [failure, 400],
  "backup.import_failed": [failure, 500],
  "backup.import_too_large": [failure, 400],
  // Guided set-up (agent setup, the TUI's set-up form).
  "setup.already_configured": [failure, 400],
  "setup.invalid": [usage, 400],
  "setup.missing_key": [usage, 400],
  "setup.no_models": [failure, 400],
  "setup.unknown_model": [notFound, 400],
  "systemd.port_taken": [failure, 400],
  "systemd.unit_taken": [failure, 400],
  // An actor's action threw, as its owner sees it on the local socket (agent actors call).
  "actor.action_failed": [failure, 500],
  // dist-limits (issue 23)
  "chat.prompt_too_large": [failure, 413],
  "skills.unreadable": [failure, 400],
  "profile.changed_since_preview": [failure, 409],
  // Connection caps (docs/limits.md): every connection busy, a new one refused.
  "gateway.too_many_connections": [unavailable, 503],
  "rpc.too_many_connections": [unavailable, 503],
  // An actor's code passed a wrong kind of argument to its context (c.kv with a number key, say).
  "actor.invalid_argument": [failure, 400],
  // RivetKit 2.2.1's own codes (issue 37): c.state without state; queue message guards; a wait cut by destroy.
  "actor.state_not_enabled": [failure, 400],
  "queue.previous_message_not_completed": [failure, 400],
  "queue.already_completed": [failure, 400],
  "actor.aborted": [failure, 400],
  // Feature boundaries (issue 34): a feature needs a service no feature provides; an RPC table with no handler or two.
  "daemon.service_unavailable": [unavailable, 503],
  "daemon.feature_order": [unavailable, 500],
  "rpc.duplicate_handler": [unavailable, 500],
  "rpc.missing_handler": [unavailable, 500],
  // A non-loopback listener with no token (daemon/http/access.ts assertBindAllowed).
  "gateway.token_required": [usage, 400],
  "proxy.token_required": [usage, 400],
  // cors_origins ["*"] on a listener with no key (daemon/http/access.ts assertOriginsAllowed).
  "proxy.cors_wildcard_needs_key": [usage, 400],
  "api_server.cors_wildcard_needs_key": [usage, 400],
  // The coder runtime (docs/coder-runtime.md).
  "coder.install_failed": [failure, 502],
  "coder.invalid_config": [usage, 400],
  "coder.not_eligible": [usage, 400],
  "coder.not_installed": [unavailable, 503],
  "coder.protocol": [failure, 502],
  "coder.request_failed": [failure, 502],
  "coder.server_died": [failure, 502],
  "coder.server_hung": [failure, 504],
  "coder.turn_timeout": [failure, 504],
  "coder.unavailable": [unavailable, 503],
  "proxy.listen_failed": [unavailable, 400],
  "api_server.token_required": [usage, 400],
  // Teams delivery and the Graph change-notification listener (docs/messaging.md#teams).
  "msgraph_webhook.token_required": [usage, 400],
  "msgraph_webhook.bad_client_state": [failure, 403],
  "teams.not_configured": [usage, 400],
  "teams.api_error": [unavailable, 502],
  // MCP servers (docs/mcp.md).
  "mcp.call_failed": [failure, 400],
  "mcp.disabled": [failure, 400],
  "mcp.exists": [failure, 400],
  "mcp.invalid_config": [usage, 400],
  "mcp.not_found": [notFound, 404],
  "mcp.server_exited": [failure, 502],
  "mcp.timeout": [failure, 504],
  "mcp.unavailable": [unavailable, 503],
  // MCP elicitation answers (docs/mcp.md).
  "approvals.elicitation_not_found": [notFound, 404],
  "approvals.elicitation_invalid": [usage, 400],
  // The OpenAI-compatible API server (docs/api-server.md).
  "api_server.bind_failed": [unavailable, 503],
  "api_server.model_not_found": [notFound, 404],
  "api_server.invalid_request": [usage, 400],
  "api_server.session_profile": [usage, 400],
  "api_server.not_found": [notFound, 404],
} as const satisfies Record<string, readonly [exit: number, http: number]>;

/**
 * Every code the product raises: a listed one, or an actor's own `user.<code>` (publicUserError).
 * `AgentError`'s constructor takes only these, so a mistyped code fails to compile.
 */
export type ErrorCode = keyof typeof CODES | `user.${string}`;

/** What `code` maps to; defaults for a code that is not listed. */
export function errorCodeInfo(code: string): ErrorCodeInfo {
  const known = (CODES as Record<string, readonly [number, number]>)[code];
  if (known) return { exit: known[0], http: known[1] };
  return { exit: failure, http: code.startsWith("internal.") ? 500 : 400 };
}

export function isRegisteredCode(code: string): boolean {
  return Object.hasOwn(CODES, code);
}

export function registeredCodes(): string[] {
  return Object.keys(CODES);
}

/** The exit code for anything thrown: its code's; 1 for what is not an AgentError. */
export function exitCodeFor(error: unknown): number {
  return error instanceof AgentError ? errorCodeInfo(error.code).exit : EXIT.failure;
}
