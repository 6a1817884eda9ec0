import { coerce } from "../../../shared/config/resolve.js";

/** Spec limit: the footer lists at most this many files. */
export const FOOTER_MAX_FILES = 10;
export const VERIFIER_ENV = "AGENT_FILE_MUTATION_VERIFIER";

export type VerifierOptions = { config?: { display?: { file_mutation_verifier?: boolean } }; env?: NodeJS.ProcessEnv };

export interface MutationRecord {
  /** Absolute path (ToolResult.mutation.path). */
  path: string;
  ok: boolean;
}

/**
 * Paths whose edits in this turn failed and were not followed by a successful edit of the same
 * path, in order of their last failure. A success before the failure does not clear it: the
 * final state is what the model meant, and that edit did not land.
 */
export function unresolvedFailedEdits(mutations: Iterable<MutationRecord>): string[] {
  const state = new Map<string, boolean>();
  for (const m of mutations) {
    state.delete(m.path); // re-insert so the order follows the latest edit
    state.set(m.path, m.ok);
  }
  return [...state].filter(([, ok]) => !ok).map(([path]) => path);
}

/** `display.file_mutation_verifier` (default true); the env override wins when set. */
export function fileMutationVerifierEnabled(options: VerifierOptions = {}): boolean {
  const raw = options.env?.[VERIFIER_ENV];
  if (raw !== undefined && raw.trim() !== "") {
    try {
      return coerce(raw, true, VERIFIER_ENV) as boolean;
    } catch {
      // an unparsable value falls back to the config rather than failing the turn
    }
  }
  return options.config?.display?.file_mutation_verifier ?? true;
}

/** The footer text listing the given unchanged files, or null when there are none. */
export function formatFailedEditsFooter(paths: readonly string[]): string | null {
  if (paths.length === 0) return null;
  const shown = paths.slice(0, FOOTER_MAX_FILES).map((p) => `- ${p}`);
  if (paths.length > FOOTER_MAX_FILES) shown.push(`- and ${paths.length - FOOTER_MAX_FILES} more`);
  const which = paths.length === 1 ? "this file was" : `these ${paths.length} files were`;
  return `---\nNote: edits in this turn failed and were not retried successfully, so ${which} left unchanged:\n${shown.join("\n")}`;
}

/**
 * For the loop, at the end of a turn: given the turn's mutation results in order (undefined
 * entries, from tools that mutate nothing, are ignored), the unchanged paths and the advisory
 * footer to append to the answer. `footer` is null when nothing is left failed or the verifier
 * is off (`paths` is still reported).
 */
export function failedEdits(mutations: Iterable<MutationRecord | undefined>, options: VerifierOptions = {}): { paths: string[]; footer: string | null } {
  const paths = unresolvedFailedEdits([...mutations].filter((m): m is MutationRecord => Boolean(m)));
  return { paths, footer: fileMutationVerifierEnabled(options) ? formatFailedEditsFooter(paths) : null };
}

/** Just the footer (see failedEdits). */
export function failedEditsFooter(mutations: Iterable<MutationRecord | undefined>, options: VerifierOptions = {}): string | null {
  return failedEdits(mutations, options).footer;
}
