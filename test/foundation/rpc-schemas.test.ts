import { test } from "uvu";
import * as assert from "uvu/assert";
import { rpcConnect, runCli, startedHome } from "../helpers/cli.js";

type RpcError = { code: number; message: string; data?: { code?: string } };

async function rejection(p: Promise<unknown>): Promise<RpcError> {
  try {
    await p;
  } catch (error) {
    return error as RpcError;
  }
  throw new Error("expected the call to fail");
}

// The cases are independent (each its own connection, session or actor name): one daemon for the file.
let h: Awaited<ReturnType<typeof startedHome>>;
test.before(async () => {
  h = await startedHome();
});
test.after(async () => {
  await h.dispose();
});

test("chat.sessions.append refuses a message with an unknown field or role, and the transcript stays as it was", async () => {
  const c = await rpcConnect(h.home);
  try {
    const { session } = (await c.rpc.sendRequest("chat.sessions.create", {})) as { session: { id: string } };
    const sessionId = session.id;
    const bad = [
      [{ role: "user", content: "hi", injected: true }],
      [{ role: "root", content: "hi" }],
      [{ role: "user", content: [{ type: "text", text: "hi", extra: 1 }] }],
      [{ role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "x", arguments: {} } }] }],
    ];
    for (const messages of bad) {
      const error = await rejection(c.rpc.sendRequest("chat.sessions.append", { sessionId, messages }));
      assert.is(error.code, -32602, JSON.stringify(messages));
      assert.is(error.data?.code, "rpc.invalid_params");
    }
    const got = (await c.rpc.sendRequest("chat.sessions.get", { sessionId })) as { messages: unknown[] };
    assert.is(got.messages.length, 0);
    const ok = (await c.rpc.sendRequest("chat.sessions.append", {
      sessionId,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "hi" },
            { type: "image_url", image_url: { url: "data:image/png;base64,AA==" } },
          ],
        },
      ],
    })) as { messageCount: number };
    assert.is(ok.messageCount, 1);
  } finally {
    c.close();
  }
});

test("actors.create refuses a crash_policy that is not restart, sleep or destroy", async () => {
  const c = await rpcConnect(h.home);
  try {
    const error = await rejection(c.rpc.sendRequest("actors.create", { name: "anything", crash_policy: "sometimes" }));
    assert.is(error.code, -32602);
    assert.match(error.message, /crash_policy: crash_policy must be one of restart, sleep, destroy/);
  } finally {
    c.close();
  }
});

test("agent actors create --crash-policy with an unknown policy is a usage error", async () => {
  const r = await runCli(["actors", "create", "anything", "--crash-policy", "sometimes"], { home: h.home });
  assert.is(r.code, 2);
  assert.match(r.stderr, /unknown --crash-policy "sometimes": crash_policy must be one of restart, sleep, destroy/);
});

test.run();
