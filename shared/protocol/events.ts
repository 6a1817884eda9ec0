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
