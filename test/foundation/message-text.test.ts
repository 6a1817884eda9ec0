// The one reading of a message's content as plain text (shared/message-text.ts), used by search
// snippets, snapshots, `agent sessions show` and the TUI's chat and sessions views.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { contentText } from "../../shared/message-text.js";

test("a string is itself; null or a missing content is empty", () => {
  assert.is(contentText("hello"), "hello");
  assert.is(contentText(null), "");
  assert.is(contentText(undefined), "");
});

test("text parts as they are, an image as [image], other parts left out, joined by the separator", () => {
  const parts = [
    { type: "text", text: "look at" },
    { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
    { type: "input_audio", input_audio: { data: "x" } },
    { type: "text" },
    { type: "text", text: "this" },
  ];
  assert.is(contentText(parts), "look at [image]   this");
  assert.is(contentText(parts, "\n"), "look at\n[image]\n\n\nthis");
});

test.run();
