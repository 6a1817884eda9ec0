/**
 * The Discord adapter's settings: the `discord` section of config.yaml, with the environment
 * winning where the spec says so (DISCORD_REPLY_TO_MODE, DISCORD_ALLOW_ANY_ATTACHMENT,
 * DISCORD_MAX_ATTACHMENT_BYTES). Variables are read through the one env table. No I/O.
 */
import { envValue } from "../../../shared/config/env.js";
import { AgentError } from "../../../shared/errors.js";

export const DEFAULT_MAX_ATTACHMENT_BYTES = 32 * 1024 * 1024;
export type ReplyToMode = "off" | "first" | "all";

export interface DiscordSettings {
  replyToMode: ReplyToMode;
  allowAnyAttachment: boolean;
  /** 0: unlimited. */
  maxAttachmentBytes: number;
  /** Guild channels where the bot answers without being mentioned. */
  freeChannels: ReadonlySet<string>;
  /** The REST base (discord.js `rest.api`); empty: Discord's. */
  apiRoot: string;
}

const str = (v: unknown, d = "") => (typeof v === "string" ? v : d);
const list = (v: unknown) => (Array.isArray(v) ? v.map(String) : []);

function flag(raw: string | undefined, name: string): boolean | null {
  const v = raw?.trim().toLowerCase();
  if (!v) return null;
  if (["1", "true", "yes", "on"].includes(v)) return true;
  if (["0", "false", "no", "off"].includes(v)) return false;
  throw new AgentError("config.invalid_value", `${name} must be true or false, not ${JSON.stringify(raw?.slice(0, 40))}`);
}

export function discordSettings(config: Record<string, unknown>, env: NodeJS.ProcessEnv): DiscordSettings {
  const modeRaw = (envValue("DISCORD_REPLY_TO_MODE", env)?.trim() || str(config.reply_to_mode, "first")).toLowerCase();
  if (modeRaw !== "off" && modeRaw !== "first" && modeRaw !== "all")
    throw new AgentError("config.invalid_value", `DISCORD_REPLY_TO_MODE must be off, first or all, not ${JSON.stringify(modeRaw.slice(0, 40))}`);
  const anyEnv = flag(envValue("DISCORD_ALLOW_ANY_ATTACHMENT", env), "DISCORD_ALLOW_ANY_ATTACHMENT");
  const maxRaw = envValue("DISCORD_MAX_ATTACHMENT_BYTES", env)?.trim();
  let max = typeof config.max_attachment_bytes === "number" ? config.max_attachment_bytes : DEFAULT_MAX_ATTACHMENT_BYTES;
  if (maxRaw) {
    const n = Number(maxRaw);
    if (!Number.isInteger(n) || n < 0)
      throw new AgentError(
        "config.invalid_value",
        `DISCORD_MAX_ATTACHMENT_BYTES must be a whole number of bytes (0: unlimited), not ${JSON.stringify(maxRaw.slice(0, 40))}`,
      );
    max = n;
  }
  return {
    replyToMode: modeRaw,
    allowAnyAttachment: anyEnv ?? config.allow_any_attachment === true,
    maxAttachmentBytes: max,
    freeChannels: new Set(list(config.free_channels)),
    apiRoot: str(config.api_root).replace(/\/+$/, ""),
  };
}

/** An attachment as Discord describes it in a message. */
export interface AttachmentInfo {
  filename: string;
  size: number;
  contentType: string | null;
}

export type AttachmentKind = "image" | "text" | "file";

const TEXT_EXT =
  /\.(txt|md|markdown|csv|tsv|json|jsonl|ya?ml|toml|ini|log|xml|html?|css|js|mjs|cjs|ts|tsx|jsx|py|rb|go|rs|java|kt|c|h|cc|cpp|hpp|cs|sh|bash|zsh|sql|diff|patch)$/i;
const IMAGE_EXT = /\.(png|jpe?g|gif|webp)$/i;

/** What an attachment is, by its content type (or, without one, its extension). */
export function attachmentKind(a: AttachmentInfo): AttachmentKind {
  const type = (a.contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  if (/^image\/(png|jpeg|gif|webp)$/.test(type)) return "image";
  if (type.startsWith("text/") || type === "application/json" || type === "application/x-yaml" || type === "application/xml") return "text";
  if (!type && IMAGE_EXT.test(a.filename)) return "image";
  if ((!type || type === "application/octet-stream") && TEXT_EXT.test(a.filename)) return "text";
  return "file";
}

const mib = (n: number) => `${(n / (1024 * 1024)).toFixed(n % (1024 * 1024) === 0 ? 0 : 1)} MiB`;

/** Null when the attachment is accepted; else the one-line reason the chat is told. */
export function attachmentRefusal(a: AttachmentInfo, s: Pick<DiscordSettings, "allowAnyAttachment" | "maxAttachmentBytes">): string | null {
  const name = a.filename.replace(/[\r\n\t]/g, " ").slice(0, 100);
  if (!s.allowAnyAttachment && attachmentKind(a) === "file")
    return `Attachment "${name}" refused: only images and text files are accepted (${a.contentType ?? "unknown type"}).`;
  if (s.maxAttachmentBytes > 0 && a.size > s.maxAttachmentBytes)
    return `Attachment "${name}" refused: ${a.size} bytes is over the limit of ${s.maxAttachmentBytes} bytes (${mib(s.maxAttachmentBytes)}).`;
  return null;
}

export function discordAccessLists(config: Record<string, unknown>): { users: string[]; channels: string[] } {
  return { users: list(config.allow_users), channels: list(config.allow_channels) };
}
