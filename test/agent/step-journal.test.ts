import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { req, tempRuntime } from "../actors/helpers.js";
import { chatHome, waitFor } from "./helpers.js";
import { actorFilePath } from "../../daemon/actors/storage/actor-storage.js";

test("a daemon killed with -9 mid-turn resumes the turn without re-running the tool steps that finished", async () => {
  let slowOnce = true;
  const h = await chatHome({
    respond: (req) => {
      const done = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool").length;
      if (done < 3) return { toolCalls: [{ name: "terminal", arguments: { command: `echo ${done + 1} >> ${join(h.home, "ran.log")}` } }] };
      if (slowOnce) {
        slowOnce = false;
        return { text: "all three ran, and this answer is slow", chunkChars: 2, chunkDelayMs: 200 };
      }
      return { text: "all three ran" };
    },
  });
  try {
    const chat = h.spawnChat(["-q", "run three commands"]);
    chat.on("error", () => undefined);
    await waitFor("the fourth model call", () => h.fake.requests.length === 4, 20_000);
    const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(pid, "SIGKILL");
    await waitFor("the daemon to die", () => !existsSync(`/proc/${pid}`), 5_000);
    const actors = join(h.home, "data", "actors");
    assert.ok(
      readdirSync(actors, { recursive: true, encoding: "utf8" }).some((f) => f.endsWith(".json.wal")),
      "the finished steps are in a step journal",
    );
    assert.is(readFileSync(join(h.home, "ran.log"), "utf8"), "1\n2\n3\n");

    // The next start wakes the session and its workflow picks the turn up where it was.
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      const [session] = (await client.call("chat.sessions.list", {})).sessions;
      let messages: StoredMessage[] = [];
      const poll = setInterval(async () => {
        messages = (await client.call("chat.sessions.get", { sessionId: session!.id }).catch(() => ({ messages: [] }))).messages;
      }, 100);
      try {
        await waitFor("the resumed turn to finish", () => messages.at(-1)?.content === "all three ran", 20_000);
      } finally {
        clearInterval(poll);
      }
      assert.equal(
        messages.map((m) => m.role),
        ["user", "assistant", "tool", "assistant", "tool", "assistant", "tool", "assistant"],
      );
      const results = messages.filter((m) => m.role === "tool").map((m) => m.tool_call_id);
      assert.is(new Set(results).size, 3);
    } finally {
      client.close();
    }
    assert.is(readFileSync(join(h.home, "ran.log"), "utf8"), "1\n2\n3\n", "no tool ran twice");
    assert.is(h.fake.requests.length, 5, "only the unfinished model call was made again");
  } finally {
    await h.dispose();
  }
});

test("steps journaled before a crash are not run again, and a torn last journal line is ignored", async () => {
  const runs: Record<string, number> = { a: 0, b: 0, c: 0 };
  let release: () => void = () => undefined;
  const def: ActorDefinition = {
    actions: {},
    workflow: async (w) => {
      await w.step("a", async () => ++runs.a);
      await w.step("b", async () => ++runs.b);
      await w.step("c", async () => {
        runs.c++;
        await new Promise<void>((r) => (release = r));
        return "c";
      });
    },
  };
  const h = await tempRuntime({ wf: def });
  try {
    const { actor } = await h.rt.getOrCreate({ ...req("wf"), key: "k" });
    await waitFor("step c running", () => runs.c === 1, 3000);
    // What a kill -9 would leave: the actor file and its journal as they are now.
    const file = actorFilePath(h.dir, actor.actor_id);
    const saved = { file: readFileSync(file, "utf8"), wal: readFileSync(`${file}.wal`, "utf8") };
    assert.is(saved.wal.trim().split("\n").length, 2, "a and b are journaled, not yet folded into the file");
    release();
    await h.rt.stop(); // (graceful: folds the journal; undone below)
    writeFileSync(file, saved.file);
    writeFileSync(`${file}.wal`, saved.wal + '{"s":99,"e":{"id":"e9'); // a torn write
    await h.restart();
    await waitFor("step c re-run after the crash", () => runs.c === 2, 3000);
    assert.equal({ a: runs.a, b: runs.b }, { a: 1, b: 1 }, "finished steps came from the journal");
    // The torn bytes were cut off at load, so the next line starts on a line of its own.
    assert.is(readFileSync(`${file}.wal`, "utf8"), saved.wal);
    release();
    await waitFor(
      "completed",
      async () => ((await h.rt.inspector(actor.actor_id).workflowHistory()).history as { status: string }).status === "completed",
      3000,
    );
    assert.not.ok(existsSync(`${file}.wal`), "the journal was folded into the actor file");
  } finally {
    release();
    await h.dispose();
  }
});

test.run();
