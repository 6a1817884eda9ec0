import { AgentError } from "../shared/errors.js";

/** Exit codes, mapped from error codes in this one place. */
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

const BY_CODE: Array<[RegExp, number]> = [
  [/^usage\./, EXIT.usage],
  [/^(api\.bad_request|rpc\.invalid_params|config\.(unknown_key|invalid_value|secret_key|not_a_value))$/, EXIT.usage],
  [/^daemon\.not_running$/, EXIT.notRunning],
  // actor.not_found, action.not_found, actor.name_not_found (no such definition), ...
  [/\.(name_|image_|entry_)?not_found$/, EXIT.notFound],
  [/^rpc\.protocol_mismatch$/, EXIT.protocolMismatch],
  [/^daemon\.(start_failed|start_timeout|socket_path_too_long)$/, EXIT.unavailable],
  [/^model\.rate_limited$/, EXIT.rateLimited],
  [/\.(interrupted|cancelled)$/, EXIT.interrupted],
];

export function exitCodeFor(error: unknown): number {
  if (!(error instanceof AgentError)) return EXIT.failure;
  for (const [pattern, code] of BY_CODE) if (pattern.test(error.code)) return code;
  return EXIT.failure;
}
