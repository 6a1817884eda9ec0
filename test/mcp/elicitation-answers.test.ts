// Answers to an MCP server's elicitation over the RPC, as any front end sends them: an answer that
// does not fit the form is refused (and the question stays open), an unknown id is refused, and
// a question nobody answers is declined at approvals.timeout.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";
import { connectDaemon } from "../../shared/client/index.js";
import { toAgentError } from "../../shared/errors.js";
import { EVERYTHING, mcpConfig } from "./helpers.js";

test("a bad answer is refused and changes nothing; unanswered, the question is declined at the timeout", async () => {
  const h = await chatHome(
    {},
    `${mcpConfig({ everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } })}approvals:\n  mode: off\n  timeout: 3\n`,
  );
  await h.cli(["daemon", "start"]);
  const client = await connectDaemon({ home: h.home });
  try {
    h.fake.setScript([{ toolCalls: [{ name: "mcp_everything_trigger-elicitation-request", arguments: {} }] }, { text: "Nobody answered." }]);
    const events: Array<{ type: string; by?: string; message?: string }> = [];
    client.onEvent((e) => events.push(e.data as { type: string }));
    const sent = client.call("chat.send", { prompt: "ask me", interactive: true });
    let pending: Array<{ id: string; server: string; message: string; expiresAt: number; createdAt: number }> = [];
    await waitFor("the elicitation", async () => (pending = (await client.call("approvals.elicitation.pending", {})).elicitations).length === 1, 30_000);
    const q = pending[0]!;
    assert.is(q.server, "everything");
    assert.is(q.message, "Please provide inputs for the following fields:");
    assert.is(q.expiresAt - q.createdAt, 3000);

    const refused = async (params: Record<string, unknown>, code: string, message: RegExp) => {
      const e = await client.call("approvals.elicitation.answer", params as never).then(
        () => null,
        (error) => toAgentError(error),
      );
      assert.ok(e, `refused: ${JSON.stringify(params)}`);
      assert.is(e!.code, code);
      assert.match(e!.message, message);
    };
    await refused({ id: q.id, action: "accept", content: { check: true } }, "approvals.elicitation_invalid", /MCP server everything: name is required/);
    await refused(
      { id: q.id, action: "accept", content: { name: "x", integer: 500, bogus: 1 } },
      "approvals.elicitation_invalid",
      /bogus is not a field of this form; integer must be at most 100/,
    );
    await refused({ id: q.id, action: "decline", content: { name: "x" } }, "approvals.elicitation_invalid", /content goes only with accept/);
    await refused({ id: "el_nope", action: "decline" }, "approvals.elicitation_not_found", /no elicitation "el_nope" is waiting/);
    assert.is((await client.call("approvals.elicitation.pending", {})).elicitations.length, 1, "still waiting after the refused answers");

    const r = await sent;
    assert.is(r.answer, "Nobody answered.");
    assert.match(toolMessages(h.fake, 1)[0]!.content, /User declined to provide the requested information/);
    const resolved = events.find((e) => e.type === "elicitation_resolved");
    assert.is(resolved?.by, "timeout");
    assert.match(resolved?.message ?? "", /declined: nobody answered within 3 s \(approvals\.timeout\)/);
    await refused({ id: q.id, action: "decline" }, "approvals.elicitation_not_found", /no elicitation/);
  } finally {
    client.close();
    await h.dispose();
  }
});

test.run();
