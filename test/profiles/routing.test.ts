import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome } from "../agent/helpers.js";
import { profileHome, writeTree } from "./helpers.js";

let h: Awaited<ReturnType<typeof chatHome>>;
let userHome: ReturnType<typeof profileHome>;

test.before(async () => {
  h = await chatHome({ script: [{ text: "ok" }], loop: true });
  userHome = profileHome();
  h.env.HOME = userHome.userHome;
  h.env.AGENT_PROFILE = "";
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  writeTree(join(h.home, "profiles", "writer"), {
    "config.yaml": "_config_version: 13\nmodel:\n  name: writer-model\n",
    "SOUL.md": "You are Quill, a careful poet.\n",
  });
});
test.after(async () => {
  await h.dispose();
  await userHome.dispose();
});

const lastRequest = () => h.fake.requests[h.fake.requests.length - 1]!.body;

test("a chat turn with --profile runs in that profile, with its model config and SOUL.md", async () => {
  const r = await h.cli(["--profile", "writer", "chat", "-q", "hi", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const body = lastRequest();
  assert.is(body.model, "writer-model");
  const system = body.messages[0];
  assert.is(system.role, "system");
  assert.match(system.content, /You are Quill, a careful poet\./);
  const { session_id: sessionId } = JSON.parse(r.stdout);
  const client = await connectDaemon({ home: h.home, env: { AGENT_PROFILE: "writer" } });
  try {
    const { session } = await client.call("chat.sessions.get", { sessionId, limit: 1 });
    assert.is(session.profile, "writer");
  } finally {
    client.close();
  }
});

test("without --profile the turn uses the home's model and no persona", async () => {
  const r = await h.cli(["chat", "-q", "hello"]);
  assert.is(r.code, 0, r.stderr);
  const body = lastRequest();
  assert.is(body.model, "fake-model");
  assert.not.match(body.messages[0].content, /Quill/);
});

test("AGENT_PROFILE picks the profile like --profile", async () => {
  const r = await h.cli(["chat", "-q", "hey"], { env: { AGENT_PROFILE: "writer" } });
  assert.is(r.code, 0, r.stderr);
  assert.is(lastRequest().model, "writer-model");
});

test("a change to the profile's config.yaml applies to its next turn", async () => {
  writeFileSync(join(h.home, "profiles", "writer", "config.yaml"), "_config_version: 13\nmodel:\n  name: writer-model-2\n");
  const r = await h.cli(["-p", "writer", "chat", "-q", "again"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(lastRequest().model, "writer-model-2");
});

test("a profile's .env layers over the home's in the environment its tools see", async () => {
  writeFileSync(join(h.home, ".env"), "LAYER_A=home\nLAYER_B=home\n");
  writeFileSync(join(h.home, "profiles", "writer", ".env"), "LAYER_B=writer\n");
  // The home's files are re-read on reload; a profile's whenever they change.
  assert.is((await h.cli(["daemon", "reload"])).code, 0);
  h.fake.setScript([{ toolCalls: [{ name: "terminal", arguments: { command: "echo A=$LAYER_A B=$LAYER_B" } }] }, { text: "done" }]);
  const r = await h.cli(["-p", "writer", "chat", "-q", "print them"]);
  assert.is(r.code, 0, r.stderr);
  const tool = lastRequest().messages.find((m: { role: string }) => m.role === "tool");
  assert.match(tool.content, /A=home B=writer/);
  h.fake.setScript([{ text: "ok" }], true);
});

test("a kanban worker run with --profile uses the profile's model and SOUL.md", async () => {
  h.fake.setScript([{ text: "ok" }], true);
  const r = await h.cli(["-p", "writer", "chat", "-q", "work the task"], { env: { AGENT_KANBAN_TASK: "t_1" } });
  assert.is(r.code, 0, r.stderr);
  const body = lastRequest();
  assert.match(body.model, /^writer-model/);
  assert.match(body.messages[0].content, /You are Quill/);
  assert.match(body.messages[0].content, /kanban task \(t_1\)/);
});

test("describe --text writes a user description into profile.yaml", async () => {
  const r = await h.cli(["profile", "describe", "writer", "--text", "my poet"]);
  assert.is(r.code, 0, r.stderr);
  const meta = readFileSync(join(h.home, "profiles", "writer", "profile.yaml"), "utf8");
  assert.match(meta, /description: my poet/);
  assert.match(meta, /description_auto: false/);
});

test("describe --auto never replaces a description the user wrote", async () => {
  const before = h.fake.requests.length;
  const r = await h.cli(["profile", "describe", "writer", "--auto"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /kept the description you wrote/);
  assert.is(h.fake.requests.length, before, "no model call");
  assert.match(readFileSync(join(h.home, "profiles", "writer", "profile.yaml"), "utf8"), /description: my poet/);
});

test("describe --auto --overwrite has the model write it from the SOUL.md, in the profile_describer slot", async () => {
  h.fake.setScript([{ text: "A careful poet named Quill." }], true);
  writeFileSync(
    join(h.home, "profiles", "writer", "config.yaml"),
    "_config_version: 13\nmodel:\n  name: writer-model\nauxiliary:\n  profile_describer:\n    model: describer-model\n",
  );
  const r = await h.cli(["profile", "describe", "writer", "--auto", "--overwrite", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const body = lastRequest();
  assert.is(body.model, "describer-model");
  assert.match(JSON.stringify(body.messages), /You are Quill/);
  const meta = readFileSync(join(h.home, "profiles", "writer", "profile.yaml"), "utf8");
  assert.match(meta, /description: A careful poet named Quill\./);
  assert.match(meta, /description_auto: true/);
});

test("describe --all --auto fills profiles without a user description, falling back to the main model", async () => {
  h.fake.setScript([{ text: "The home profile." }], true);
  const r = await h.cli(["profile", "describe", "--all", "--auto", "--json"]);
  assert.is(r.code, 0, r.stderr);
  const results = JSON.parse(r.stdout).results as Array<{ name: string; description: string; changed: boolean }>;
  assert.is(results.find((x) => x.name === "default")!.description, "The home profile.");
  const models = h.fake.requests.slice(-2).map((q) => q.body.model);
  assert.ok(models.includes("fake-model"), JSON.stringify(models));
});

test.run();
