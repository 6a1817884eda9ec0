/**
 * Who may start a turn over LINE: separate allowlists of users (1:1 chats), groups and rooms; a
 * group or room is let in by its own id (any member may talk in a listed group). Everything else
 * gets no turn and is logged with the sender's id, so the owner can add it.
 * `LINE_ALLOW_ALL_USERS=true` lets everyone in (development only; warned about at start).
 */
import type { LineSettings } from "./line-settings.js";

export interface LineSource {
  type: "user" | "group" | "room";
  userId?: string;
  groupId?: string;
  roomId?: string;
}

export interface AccessDecision {
  allowed: boolean;
  /** The chat a reply goes to: the user, group or room id. */
  chatId: string;
  /** Which list decided: `users`, `groups`, `rooms` or `all` (the escape hatch). */
  list: "users" | "groups" | "rooms" | "all";
}

export function chatIdOf(source: LineSource): string {
  return (source.type === "group" ? source.groupId : source.type === "room" ? source.roomId : source.userId) ?? "";
}

export function decideAccess(settings: Pick<LineSettings, "allowedUsers" | "allowedGroups" | "allowedRooms" | "allowAll">, source: LineSource): AccessDecision {
  const chatId = chatIdOf(source);
  if (settings.allowAll && chatId) return { allowed: true, chatId, list: "all" };
  switch (source.type) {
    case "group":
      return { allowed: settings.allowedGroups.has(chatId), chatId, list: "groups" };
    case "room":
      return { allowed: settings.allowedRooms.has(chatId), chatId, list: "rooms" };
    default:
      return { allowed: settings.allowedUsers.has(chatId), chatId, list: "users" };
  }
}
