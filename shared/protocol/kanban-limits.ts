/**
 * Kanban limits both sides read without loading the protocol's zod schemas (the CLI checks a plan
 * file's size before it sends it; zod costs every `agent kanban` call tens of ms of start-up).
 */

/** The largest plan file `kanban create --from-file` takes, in characters (the CLI checks it before reading). */
export const MAX_PLAN_TEXT = 2 * 1024 * 1024;
