import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, driveChat, toolMessages } from "../agent/helpers.js";
import { EVERYTHING, mcpConfig } from "./helpers.js";

test("chat -q: the fake model calls mcp_everything_echo and reads the server's answer", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "hello over mcp" } }] }, { text: "The server echoed." }]);
    const r = await h.chat(["-q", "echo something"]);
    assert.is(r.code, 0, r.stderr);
    assert.is(r.stdout.trim(), "The server echoed.");
    const offered = h.fake.requests[0]!.body.tools.map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("mcp_everything_echo"), offered.join(", "));
    assert.ok(offered.includes("mcp_everything_get-sum"), offered.join(", "));
    const echo = h.fake.requests[0]!.body.tools.find((t: { function: { name: string } }) => t.function.name === "mcp_everything_echo");
    assert.equal(echo.function.parameters.type, "object");
    assert.ok(echo.function.parameters.properties.message);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /Echo: hello over mcp/);
  } finally {
    await h.dispose();
  }
});

test("an image result reaches the model as an image part", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_get-tiny-image", arguments: {} }] }, { text: "I saw it." }]);
    writeFileSync(join(h.home, ".env"), "");
    const r = await h.chat(["-q", "show me an image"]);
    assert.is(r.code, 0, r.stderr);
    const messages = h.fake.requests[1]!.body.messages as Array<{ role: string; content: unknown }>;
    const parts = messages.flatMap((m) => (Array.isArray(m.content) ? (m.content as Array<{ type: string; image_url?: { url: string } }>) : []));
    const image = parts.find((p) => p.type === "image_url");
    assert.ok(image, JSON.stringify(messages).slice(0, 2000));
    assert.match(image!.image_url!.url, /^data:image\/png;base64,/);
  } finally {
    await h.dispose();
  }
});

test("a server that fails to start: the turn goes on without its tools, with a notice naming it", async () => {
  const h = await chatHome(
    {},
    mcpConfig({
      broken: { command: process.execPath, args: ["-e", "process.stderr.write('cannot open the database\\n'); process.exit(3)"] },
      everything: { command: process.execPath, args: [EVERYTHING, "stdio"] },
    }),
  );
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_echo", arguments: { message: "still here" } }] }, { text: "Done." }]);
    const r = await h.chat(["-q", "go"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stderr, /MCP server broken is unavailable/);
    assert.match(r.stderr, /cannot open the database/);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /Echo: still here/);
    const listed = await h.cli(["mcp", "list", "--json"]);
    assert.is(listed.code, 0, listed.stderr);
    const servers = JSON.parse(listed.stdout).servers as Array<{ name: string; state: string; last_error: string | null; tools: number }>;
    const broken = servers.find((s) => s.name === "broken")!;
    assert.is(broken.state, "failed");
    assert.match(broken.last_error ?? "", /code 3|cannot open the database/);
    assert.is(servers.find((s) => s.name === "everything")!.state, "ready");
  } finally {
    await h.dispose();
  }
});

test("elicitation where nobody can answer (chat -q) is declined; the tool says so and the turn goes on", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_trigger-elicitation-request", arguments: {} }] }, { text: "They declined." }]);
    const r = await h.chat(["-q", "ask me"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(toolMessages(h.fake, 1)[0]!.content, /declined/);
    assert.is(r.stdout.trim(), "They declined.");
    // Said on stderr, so a declined question is never silent.
    assert.match(r.stderr, /agent: MCP server everything asked for input; declined: nobody can answer in a non-interactive session/);
  } finally {
    await h.dispose();
  }
});

test("/mcp in line-mode chat lists the profile's servers", async () => {
  const h = await chatHome({}, mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } }));
  try {
    const chat = driveChat(h);
    chat.send("/mcp");
    await chat.expect(/everything\s+stdio\s+idle/);
    chat.send("/exit");
    await chat.end();
  } finally {
    await h.dispose();
  }
});

test.run();
