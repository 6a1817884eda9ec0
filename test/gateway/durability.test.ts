// kill -9 the daemon while 2,000 concurrent increments run over HTTP; after a restart the count
// is at least every acknowledged increment, and no data file is corrupt.
import { readdirSync, readFileSync, statSync } from "node:fs";
import http from "node:http";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { isAlive } from "../../shared/process.js";
import { waitFor } from "../helpers/cli.js";
import { call, putActor, startDaemon, type TestDaemon } from "./daemon.js";

function jsonFiles(dir: string): string[] {
  const out: string[] = [];
  let entries: string[] = [];
  try {
    entries = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of entries) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...jsonFiles(p));
    else if (name.endsWith(".json")) out.push(p);
  }
  return out;
}

test("acknowledged increments survive kill -9", async () => {
  let d: TestDaemon | undefined = await startDaemon();
  let restarted: TestDaemon | undefined;
  try {
    const id = (await putActor(d.url, { name: "counter", key: "durable" })).json.actor.actor_id as string;
    const { port } = new URL(d.url);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
    const body = '{"args":[1]}';
    let acked = 0;
    let killed = false;
    const pid = d.pid;
    const one = () =>
      new Promise<void>((resolve) => {
        const r = http.request(
          {
            host: "127.0.0.1",
            port,
            path: `/gateway/${id}/action/increment`,
            method: "POST",
            agent,
            headers: { "content-type": "application/json", "content-length": body.length },
          },
          (res) => {
            res.resume();
            res.on("end", () => {
              if (res.statusCode === 200) acked++;
              if (!killed && acked >= 400) {
                killed = true;
                process.kill(pid, "SIGKILL");
              }
              resolve();
            });
            res.on("error", () => resolve());
          },
        );
        r.on("error", () => resolve());
        r.end(body);
      });
    await Promise.all(Array.from({ length: 2000 }, one));
    agent.destroy();
    if (!killed) process.kill(pid, "SIGKILL");
    assert.ok(acked >= 400, `acked ${acked}`);
    // Let the OS reap the process before restarting on the same home.
    await waitFor("the killed daemon to be gone", () => !isAlive(pid), 5000);
    const files = jsonFiles(d.home);
    assert.ok(
      files.some((f) => f.includes(id)),
      `no data file for actor ${id} among ${files.join(", ")}`,
    );
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      try {
        JSON.parse(text);
      } catch {
        assert.unreachable(`corrupt file ${file}: ${text.slice(0, 200)}`);
      }
    }
    const home = d.home;
    restarted = await startDaemon({ home });
    const count = await call(restarted.url, id, "get");
    assert.is(count.status, 200);
    console.log(`acknowledged ${acked} of 2000, count after restart ${count.json.output}`);
    assert.ok(count.json.output >= acked, `count ${count.json.output} < acknowledged ${acked}`);
    assert.ok(count.json.output <= 2000, `count ${count.json.output} > sent`);
    await restarted.stop();
  } finally {
    await restarted?.stop();
    await d?.dispose();
    d = undefined;
  }
});

test.run();
