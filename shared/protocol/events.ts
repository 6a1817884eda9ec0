/**
 * Event notifications the daemon pushes to subscribed connections, as the JSON-RPC
 * notification `event` with params `{topic, data}`. A subscription to `actor` receives
 * every topic starting with `actor.`; `*` receives everything.
 */
export const EVENT_NOTIFICATION = "event";

export interface EventMessage<T = unknown> {
  topic: string;
  data: T;
}

export function topicMatches(subscription: string, topic: string): boolean {
  return subscription === "*" || subscription === topic || topic.startsWith(subscription + ".");
}

/**
 * Broadcasts that say "this changed, read it again" (their data is small: which profile or
 * session, if any). The feature that owns the change sends them, whoever asked for it (CLI, TUI,
 * a worker, the dashboard); the dashboard's event stream relays them to its views.
 */
/** The profiles: their list, descriptions, the active one. Data `{}`. */
export const PROFILES_CHANGED_TOPIC = "profiles.changed";
/** A profile's cron table: a job added, edited, paused, resumed or removed; a run started or finished. Data `{profile}`. */
export const CRON_CHANGED_TOPIC = "cron.changed";
/** The sessions listing: a session created, deleted, or its entry updated after a turn. Data `{sessionId}`. */
export const SESSIONS_CHANGED_TOPIC = "sessions.changed";
