import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { chatHome, waitFor } from "../agent/helpers.js";

// A question still waiting when the daemon is killed is not granted by the restart: the resumed
// turn asks again, nobody is attached, and the non-interactive rule denies it clearly.

test("an approval pending at a kill -9 is not granted when the turn resumes", async () => {
  const dir = mkdtempSync(join(tmpdir(), "appr-restart-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep");
  const h = await chatHome(
    {
      respond: (req) => {
        const last = req.body.messages.at(-1);
        if (last.role === "tool") return { text: "finished" };
        return { toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] };
      },
    },
    "approvals:\n  mode: smart\n  timeout: 120\n",
  );
  try {
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    // A person's chat: it can answer, so the question waits.
    const sent = client.call("chat.send", { prompt: "clean", interactive: true, cwd: dir });
    sent.catch(() => undefined);
    let pending: Array<{ sessionId: string }> = [];
    await waitFor("the question", async () => (pending = (await client.call("approvals.pending", {})).approvals).length === 1, 20_000);
    const sessionId = pending[0]!.sessionId;
    const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(pid, "SIGKILL");
    await waitFor("the daemon to die", () => !existsSync(`/proc/${pid}`), 5_000);
    client.close();

    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const again = await connectDaemon({ home: h.home });
    try {
      let messages: StoredMessage[] = [];
      await waitFor(
        "the resumed turn to finish",
        async () => {
          messages = (await again.call("chat.sessions.get", { sessionId }).catch(() => ({ messages: [] as StoredMessage[] }))).messages;
          return messages.at(-1)?.content === "finished";
        },
        20_000,
      );
      const tool = messages.find((m) => m.role === "tool")!;
      assert.match(String(tool.content), /denied: dangerous command needs approval.*approvals\.non_interactive: deny/);
      assert.ok(existsSync(marker), "the command never ran");
      assert.equal((await again.call("approvals.pending", {})).approvals, []);
    } finally {
      again.close();
    }
  } finally {
    await h.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("interrupting a turn whose question waits drops the question and runs nothing", async () => {
  const dir = mkdtempSync(join(tmpdir(), "appr-int-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep");
  const h = await chatHome(
    { script: [{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] }, { text: "never" }] },
    "approvals:\n  mode: smart\n",
  );
  try {
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      const sent = client.call("chat.send", { prompt: "clean", interactive: true, cwd: dir });
      let pending: Array<{ sessionId: string; id: string }> = [];
      await waitFor("the question", async () => (pending = (await client.call("approvals.pending", {})).approvals).length === 1, 20_000);
      await client.call("chat.interrupt", { sessionId: pending[0]!.sessionId });
      const result = await sent;
      assert.is(result.stopReason, "interrupted");
      assert.equal((await client.call("approvals.pending", {})).approvals, []);
      assert.ok(existsSync(marker));
      const late = await client.call("approvals.answer", { id: pending[0]!.id, choice: "once" }).catch((e: Error) => e);
      assert.match(String((late as Error).message), /no approval question/);
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("when the person who could answer leaves, the waiting question gets the non-interactive rule", async () => {
  const dir = mkdtempSync(join(tmpdir(), "appr-left-"));
  mkdirSync(join(dir, "build"));
  const marker = join(dir, "build", "marker");
  writeFileSync(marker, "keep");
  const h = await chatHome(
    { script: [{ toolCalls: [{ name: "terminal", arguments: { command: "rm -rf ./build", cwd: dir } }] }, { text: "finished" }] },
    "approvals:\n  mode: smart\n  timeout: 120\n",
  );
  try {
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    client.call("chat.send", { prompt: "clean", interactive: true, cwd: dir }).catch(() => undefined);
    let pending: Array<{ sessionId: string }> = [];
    await waitFor("the question", async () => (pending = (await client.call("approvals.pending", {})).approvals).length === 1, 20_000);
    client.close();
    const other = await connectDaemon({ home: h.home });
    try {
      let messages: StoredMessage[] = [];
      await waitFor(
        "the turn to finish",
        async () => (messages = (await other.call("chat.sessions.get", { sessionId: pending[0]!.sessionId })).messages).at(-1)?.content === "finished",
        10_000,
      );
      const tool = messages.find((m) => m.role === "tool")!;
      assert.match(String(tool.content), /everyone who could answer left the session, so it is denied \(approvals\.non_interactive: deny\)/);
      assert.ok(existsSync(marker));
    } finally {
      other.close();
    }
  } finally {
    await h.dispose();
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
