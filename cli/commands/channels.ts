import { AgentError } from "../../shared/errors.js";
import type { ChannelInfo } from "../../shared/protocol/messaging.js";
import { terminalText } from "../../shared/terminal-text.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { table } from "../output.js";
import { printingCall } from "../with-daemon.js";

/** `agent channels`: the daemon's messaging adapters. Every subcommand is one call to the daemon. */
const SPEC = {
  usage: "agent channels <list|status|test|allow|deny|handoff>",
  description: "Inspect the messaging adapters (Telegram, LINE, Discord, Matrix), test a chat, edit the allowlists.",
  flags: { group: { type: "boolean" } },
  help: `Subcommands
  list                          the adapters (platform, profile, state)
  status [--json]               each adapter's state, last error and counts
  test <platform> <chat>        send a test message to a chat
  allow <platform> <id> [--group]  let a user (or, with --group, a group) talk to the agent
  deny <platform> <id> [--group]   take it off the allowlist again
  handoff <session> <platform> [chat]  continue a session in a chat (default: the last chat)

The allowlists are the profile's config keys <platform>.allow_users and <platform>.allow_groups
(Discord: discord.allow_channels; Matrix: matrix.allow_rooms) (-p <profile> edits that
profile's). Details: docs/messaging.md.

Examples
  $ agent channels status
  $ agent channels test telegram 123456789
  $ agent channels allow telegram 123456789`,
} as const;

const clean = (s: string | null | undefined) => (s ? terminalText(s) : "-");

function rows(channels: ChannelInfo[], full: boolean): string {
  if (!channels.length) return "no messaging adapter is configured (docs/messaging.md)";
  const head = ["PLATFORM", "PROFILE", "STATE", ...(full ? ["IN", "OUT", "REFUSED", "ERRORS", "CHATS", "QUEUED", "LAST ERROR"] : ["DETAIL"])];
  return table(
    head,
    channels.map((c) => [
      c.platform,
      c.profile,
      c.state + (c.allowAll ? " (allow all!)" : ""),
      ...(full
        ? [
            String(c.counts.inbound),
            String(c.counts.outbound),
            String(c.counts.refused),
            String(c.counts.errors),
            String(c.chats),
            String(c.queued),
            clean(c.lastError),
          ]
        : [clean(c.detail)]),
    ]),
  );
}

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  const [sub, ...args] = cli.input;
  const json = Boolean(cli.flags.json);
  const call = printingCall(env, json);
  const expect = (min: number, max: number, usage: string) => {
    if (args.length < min || args.length > max) throw new AgentError("usage.invalid", `wrong number of arguments; usage: ${usage}`);
  };
  switch (sub) {
    case "list":
      expect(0, 0, "agent channels list");
      return call(
        (c) => c.call("channels.list", {}),
        (r) => rows(r.channels, false),
      );
    case "status":
      expect(0, 0, "agent channels status [--json]");
      return call(
        (c) => c.call("channels.status", {}),
        (r) => `${rows(r.channels, true)}${r.pendingInbound ? `\n${r.pendingInbound} inbound message(s) waiting to be handled` : ""}`,
      );
    case "test":
      expect(2, 2, "agent channels test <platform> <chat>");
      return call(
        (c) => c.call("channels.test", { platform: args[0] as string, chat: args[1] as string }),
        (r) => `delivered to ${r.detail}`,
      );
    case "allow":
    case "deny":
      expect(2, 2, `agent channels ${sub} <platform> <id> [--group]`);
      return call(
        (c) =>
          c.call(sub === "allow" ? "channels.allow" : "channels.deny", { platform: args[0] as string, id: args[1] as string, group: Boolean(cli.flags.group) }),
        (r) => `${r.list} = [${r.ids.join(", ")}] (${r.file})`,
      );
    case "handoff":
      expect(2, 3, "agent channels handoff <session> <platform> [chat]");
      return call(
        (c) => c.call("channels.handoff", { sessionId: args[0] as string, platform: args[1] as string, ...(args[2] ? { chat: args[2] } : {}) }),
        (r) => `session ${args[0]} continues in ${r.platform} chat ${r.chatId} (profile ${r.profile})`,
      );
    default:
      throw new AgentError("usage.invalid", `unknown subcommand ${JSON.stringify(sub ?? "")}; usage: ${SPEC.usage}`);
  }
}
