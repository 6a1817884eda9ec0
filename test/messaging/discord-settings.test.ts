import { test } from "uvu";
import * as assert from "uvu/assert";
import { attachmentKind, attachmentRefusal, DEFAULT_MAX_ATTACHMENT_BYTES, discordSettings } from "../../daemon/messaging/discord/discord-settings.js";
import { matrixSettings, route } from "../../daemon/messaging/matrix/matrix-settings.js";
import { redact } from "../../daemon/messaging/messaging-service.js";

/** The settings and rules of the Discord and Matrix adapters, without a platform (the daemon tests run them for real). */

test("Discord: defaults, config, and the environment winning", () => {
  const d = discordSettings({}, {});
  assert.is(d.replyToMode, "first");
  assert.is(d.allowAnyAttachment, false);
  assert.is(d.maxAttachmentBytes, DEFAULT_MAX_ATTACHMENT_BYTES);
  assert.is(DEFAULT_MAX_ATTACHMENT_BYTES, 32 * 1024 * 1024);
  const c = discordSettings({ reply_to_mode: "all", allow_any_attachment: true, max_attachment_bytes: 0 }, {});
  assert.equal([c.replyToMode, c.allowAnyAttachment, c.maxAttachmentBytes], ["all", true, 0]);
  const e = discordSettings(
    { reply_to_mode: "all", allow_any_attachment: true, max_attachment_bytes: 0 },
    { DISCORD_REPLY_TO_MODE: "off", DISCORD_ALLOW_ANY_ATTACHMENT: "false", DISCORD_MAX_ATTACHMENT_BYTES: "10" },
  );
  assert.equal([e.replyToMode, e.allowAnyAttachment, e.maxAttachmentBytes], ["off", false, 10]);
  assert.throws(() => discordSettings({}, { DISCORD_REPLY_TO_MODE: "sometimes" }), /off, first or all/);
  assert.throws(() => discordSettings({}, { DISCORD_MAX_ATTACHMENT_BYTES: "-1" }), /whole number/);
});

test("Discord: images and text files pass; anything else only when allowed; size limits with 0 unlimited", () => {
  const strict = { allowAnyAttachment: false, maxAttachmentBytes: 100 };
  assert.is(attachmentKind({ filename: "a.png", size: 1, contentType: "image/png" }), "image");
  assert.is(attachmentKind({ filename: "a.md", size: 1, contentType: null }), "text");
  assert.is(attachmentKind({ filename: "a.py", size: 1, contentType: "application/octet-stream" }), "text");
  assert.is(attachmentKind({ filename: "a.svg", size: 1, contentType: "image/svg+xml" }), "file");
  assert.is(attachmentRefusal({ filename: "a.txt", size: 100, contentType: "text/plain" }, strict), null);
  assert.match(attachmentRefusal({ filename: "a.zip", size: 1, contentType: "application/zip" }, strict)!, /only images and text files/);
  assert.match(attachmentRefusal({ filename: "a.txt", size: 101, contentType: "text/plain" }, strict)!, /over the limit of 100 bytes/);
  assert.is(attachmentRefusal({ filename: "a.zip", size: 10 ** 9, contentType: "application/zip" }, { allowAnyAttachment: true, maxAttachmentBytes: 0 }), null);
  // One line, whatever the file is called.
  assert.not.match(attachmentRefusal({ filename: "a\nb.zip", size: 1, contentType: "application/zip" }, strict)!, /\n/);
});

test("Matrix: the environment wins; mention and thread routing", () => {
  const base = { MATRIX_HOMESERVER: "https://m.example", MATRIX_ACCESS_TOKEN: "t" };
  const d = matrixSettings({}, base);
  assert.equal([d.requireMention, d.autoThread, d.dmMentionThreads], [true, true, false]);
  const e = matrixSettings({ require_mention: true }, { ...base, MATRIX_REQUIRE_MENTION: "false", MATRIX_AUTO_THREAD: "0", MATRIX_DM_MENTION_THREADS: "yes" });
  assert.equal([e.requireMention, e.autoThread, e.dmMentionThreads], [false, false, true]);
  assert.throws(() => matrixSettings({}, { MATRIX_ACCESS_TOKEN: "t" }), /MATRIX_HOMESERVER/);
  const m = { eventId: "$e", knownThread: false, threadRoot: null };
  assert.is(route(d, { ...m, dm: false, mentioned: false }), undefined, "a room needs a mention");
  assert.is(route(d, { ...m, dm: false, mentioned: true }), "$e", "auto-thread: rooted at the message");
  assert.is(route(d, { ...m, dm: false, mentioned: false, threadRoot: "$r", knownThread: true }), "$r", "the bot's thread needs no mention");
  assert.is(route(d, { ...m, dm: false, mentioned: false, threadRoot: "$r" }), undefined, "someone else's thread does");
  assert.is(route(d, { ...m, dm: true, mentioned: false }), null, "a DM: in the room");
  assert.is(route(d, { ...m, dm: true, mentioned: false, threadRoot: "$r" }), "$r", "a DM thread: no mention needed");
  assert.is(route(e, { ...m, dm: true, mentioned: true }), "$e", "DM mention threads");
  assert.is(route(e, { ...m, dm: false, mentioned: false }), null, "no mention required, no auto-thread");
});

test("Discord and Matrix tokens never reach a status line", () => {
  assert.is(redact("login failed for MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz012345"), "login failed for <token>");
  assert.is(redact("sync failed: Bearer syt_YWdlbnQ_abcdefghijklmnop_123456"), "sync failed: Bearer <token>");
  assert.is(redact("a.b.c stays"), "a.b.c stays");
});

test.run();
