import { test } from "uvu";
import * as assert from "uvu/assert";
import { markdownToPlain, markdownToTelegramHtml } from "../../daemon/messaging/markdown.js";
import { command, extractImages, redact } from "../../daemon/messaging/messaging-service.js";
import { splitText } from "../../daemon/messaging/split.js";

test("splitText cuts at paragraphs first, then lines, then characters, within the limit and in order", () => {
  const a = "a".repeat(30);
  const b = "b".repeat(30);
  assert.equal(splitText(`${a}\n\n${b}`, 40), [a, b]);
  assert.equal(splitText(`${a}\n${b}`, 40), [a, b]);
  assert.equal(splitText("x".repeat(25), 10), ["x".repeat(10), "x".repeat(10), "x".repeat(5)]);
  assert.equal(splitText("short\n\ntext", 100), ["short\n\ntext"]);
  const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join("\n");
  const parts = splitText(long, 4096 / 8);
  assert.ok(parts.every((p) => p.length <= 512));
  assert.is(parts.join("\n"), long);
});

test("splitText never cuts a surrogate pair", () => {
  const parts = splitText("😀".repeat(10), 5);
  assert.ok(parts.every((p) => !/[\uD800-\uDBFF]$/.test(p)));
  assert.is(parts.join(""), "😀".repeat(10));
});

test("Markdown becomes Telegram's HTML subset, with text escaped", () => {
  assert.is(markdownToTelegramHtml("**bold** and *it* and `a<b>`"), "<b>bold</b> and <i>it</i> and <code>a&lt;b&gt;</code>");
  assert.is(markdownToTelegramHtml("# Title\n- item"), "<b>Title</b>\n• item");
  assert.is(markdownToTelegramHtml("```js\nif (a < b) {}\n```"), '<pre><code class="language-js">if (a &lt; b) {}</code></pre>');
  assert.is(markdownToTelegramHtml("[site](https://x.test/?a=1&b=2)"), '<a href="https://x.test/?a=1&amp;b=2">site</a>');
  assert.is(markdownToTelegramHtml("<script>"), "&lt;script&gt;");
  assert.is(markdownToPlain("**b** [s](https://x.test) `c`"), "b s (https://x.test) c");
});

test("chat commands, images the agent wrote, and tokens kept out of text", () => {
  assert.equal(command("/stop"), { name: "stop", args: [] });
  assert.equal(command("/kanban@my_bot subscribe ops"), { name: "kanban", args: ["subscribe", "ops"] });
  assert.is(command("/unknown"), null);
  assert.is(command("hello /stop"), null);
  const { text, images } = extractImages("see ![x](/definitely/not/here.png)");
  assert.equal(images, []);
  assert.is(text, "see ![x](/definitely/not/here.png)");
  assert.is(redact("GET /bot123456:ABCdefGHIjklMNOpqrSTUvwxYZ012345/getMe failed"), "GET /bot<token>/getMe failed");
});

test.run();
