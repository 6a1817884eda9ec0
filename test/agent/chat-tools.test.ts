import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "./helpers.js";

test("a one-shot chat reads a file, patches it and answers", async () => {
  const h = await chatHome();
  try {
    const file = join(h.home, "notes.txt");
    writeFileSync(file, "colour: red\n");
    h.fake.setScript([
      { toolCalls: [{ name: "read_file", arguments: { path: file } }] },
      { toolCalls: [{ name: "patch", arguments: { path: file, search: "red", replace: "blue" } }] },
      { text: "I changed the colour to blue." },
    ]);
    const r = await h.chat(["-q", "make the colour blue"]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "I changed the colour to blue.");
    assert.is(readFileSync(file, "utf8"), "colour: blue\n");
    assert.is(h.fake.requests.length, 3);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /colour: red/);
    assert.ok(h.fake.requests[0]!.body.tools.some((t: { function: { name: string } }) => t.function.name === "patch"));
  } finally {
    await h.dispose();
  }
});

test("a patch whose search text is absent fails, the model sees the error and goes on", async () => {
  const h = await chatHome();
  try {
    const file = join(h.home, "a.txt");
    writeFileSync(file, "alpha\n");
    h.fake.setScript([
      { toolCalls: [{ name: "patch", arguments: { path: file, search: "omega", replace: "beta" } }] },
      { toolCalls: [{ name: "patch", arguments: { path: file, search: "alpha", replace: "beta" } }] },
      { text: "Done on the second try." },
    ]);
    const r = await h.chat(["-q", "replace alpha"]);
    assert.is(r.code, 0, r.stderr);
    const seen = toolMessages(h.fake, 1)[0]!.content;
    assert.match(seen, /not found|no match|absent|does not occur/i);
    assert.is(readFileSync(file, "utf8"), "beta\n");
    // The later success to the same path clears it: no footer.
    assert.not.match(r.stdout, /left unchanged/);
  } finally {
    await h.dispose();
  }
});

test("an edit that failed and was never corrected ends the answer with the failed-edit footer", async () => {
  const h = await chatHome();
  try {
    const file = join(h.home, "b.txt");
    writeFileSync(file, "one\n");
    h.fake.setScript([{ toolCalls: [{ name: "patch", arguments: { path: file, search: "two", replace: "three" } }] }, { text: "All done." }]);
    const r = await h.chat(["-q", "edit b"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /^All done\./);
    assert.match(r.stdout, /left unchanged/);
    assert.ok(r.stdout.includes(file));
  } finally {
    await h.dispose();
  }
});

test("--max-turns stops a tool loop", async () => {
  const h = await chatHome({ script: [{ toolCalls: [{ name: "list_files", arguments: {} }] }], loop: true });
  try {
    const r = await h.chat(["-q", "loop forever", "--max-turns", "3"]);
    assert.is(r.code, 1, r.stderr);
    assert.is(h.fake.requests.length, 3);
    assert.match(r.stdout, /limit of 3 model calls/);
  } finally {
    await h.dispose();
  }
});

test.run();
