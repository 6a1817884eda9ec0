// A `terminal` command cut off by a kill -9 of the daemon is neither orphaned nor run again: the
// next start kills what is left of its process group, and the resumed turn tells the model the
// command was interrupted by a restart.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import type { StoredMessage } from "../../shared/protocol/chat.js";
import { chatHome, waitFor } from "../agent/helpers.js";

/** Live (not zombie) processes in group `pgid`. */
function groupMembers(pgid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const text = readFileSync(`/proc/${name}/stat`, "utf8");
      const f = text.slice(text.lastIndexOf(")") + 2).split(" ");
      if (Number(f[2]) === pgid && f[0] !== "Z") out.push(Number(name));
    } catch {}
  }
  return out;
}

test("a terminal command cut off by kill -9 is killed at the next start and reported as interrupted, not run again", async () => {
  const h = await chatHome({
    respond: (req) => {
      const tools = (req.body?.messages ?? []).filter((m: { role: string }) => m.role === "tool");
      if (tools.length === 0) {
        const command = `echo M >> ${join(h.home, "marker")}; sleep 30; echo K >> ${join(h.home, "log")}`;
        return { toolCalls: [{ name: "terminal", arguments: { command, timeout: 120 } }] };
      }
      return { text: "done" };
    },
  });
  let pgid = 0;
  try {
    const chat = h.spawnChat(["-q", "run the long command"]);
    chat.on("error", () => undefined);
    await waitFor("the command to start", () => existsSync(join(h.home, "marker")), 20_000);
    const records = join(h.home, "data", "running-commands");
    // The shell may write its marker before the daemon's record is renamed into place.
    const record = await waitFor("the running command's record", () => readdirSync(records).find((f) => f.endsWith(".json")), 5_000);
    pgid = (JSON.parse(readFileSync(join(records, record!), "utf8")) as { pgid: number }).pgid;
    assert.ok(groupMembers(pgid).length > 0, "the command's group runs");

    const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
    process.kill(pid, "SIGKILL");
    await waitFor("the daemon to die", () => !existsSync(`/proc/${pid}`), 15_000);
    assert.ok(groupMembers(pgid).length > 0, "the killed daemon left its command running");

    assert.is((await h.cli(["daemon", "start"])).code, 0);
    await waitFor("the orphaned group to be killed", () => groupMembers(pgid).length === 0, 15_000);

    const client = await connectDaemon({ home: h.home });
    try {
      const [session] = (await client.call("chat.sessions.list", {})).sessions;
      let messages: StoredMessage[] = [];
      await waitFor(
        "the resumed turn to finish",
        async () => {
          messages = (await client.call("chat.sessions.get", { sessionId: session!.id }).catch(() => ({ messages: [] }))).messages;
          return messages.at(-1)?.content === "done";
        },
        20_000,
      );
      const tool = messages.find((m) => m.role === "tool");
      assert.match(String(tool?.content), /interrupted by a daemon restart while it ran: it may have partly run/);
    } finally {
      client.close();
    }
    assert.is(readFileSync(join(h.home, "marker"), "utf8"), "M\n", "the command was not started a second time");
    assert.not.ok(existsSync(join(h.home, "log")), "the killed command did not finish");
    assert.equal(
      readdirSync(records).filter((f) => f.endsWith(".json")),
      [],
      "no record is left",
    );
  } finally {
    if (pgid) {
      try {
        process.kill(-pgid, "SIGKILL");
      } catch {}
    }
    await h.dispose();
  }
});

test.run();
