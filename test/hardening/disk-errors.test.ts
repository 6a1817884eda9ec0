// A call that reports a failed write changes nothing: the actor's data directory on a small
// tmpfs that is filled up, or bind-mounted read-only; after the disk is writable again the state
// is the last one that was acknowledged. Needs mount(2) (root): skipped with a reason otherwise.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, tempHome } from "../helpers/cli.js";
import { call, putActor, startDaemon, TEST_ACTORS, type TestDaemon } from "../gateway/daemon.js";
import { skip } from "../helpers/skip.js";
import { waitFor } from "../helpers/wait.js";

function tryMount(args: string[]): string | null {
  try {
    execFileSync("mount", args, { stdio: "pipe" });
    return null;
  } catch (error) {
    return String((error as { stderr?: Buffer }).stderr ?? error).trim() || String(error);
  }
}

function umount(dir: string): void {
  try {
    execFileSync("umount", ["-l", dir], { stdio: "pipe" });
  } catch {}
}

/** Write a file until the file system refuses (ENOSPC). */
function fill(file: string): void {
  const fd = openSync(file, "w");
  try {
    for (const size of [1 << 20, 4096, 64]) {
      const chunk = Buffer.alloc(size, 120);
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}

/** A home whose data/ is a fresh mount made by `mountData`; null (the test reported skipped, with why) when mounting is not permitted. */
async function homeWithMountedData(mountData: (dir: string) => string | null): Promise<{ d: TestDaemon; data: string; dispose: () => Promise<void> } | null> {
  const { home, cleanup } = tempHome("hd");
  const data = join(home, "data");
  mkdirSync(data, { recursive: true });
  mkdirSync(join(home, "actors"));
  const why = mountData(data);
  if (why !== null) {
    skip(`cannot mount on ${data} (${why})`);
    cleanup();
    return null;
  }
  writeFileSync(join(home, "actors", "test.mjs"), TEST_ACTORS);
  // Messages stay queued (no run loop), so the queue's size is what was acknowledged.
  writeFileSync(join(home, "actors", "inbox.mjs"), "export const inbox = { actions: { size: (c) => c.queue.size } };\n");
  const d = await startDaemon({ home });
  return {
    d,
    data,
    dispose: async () => {
      await d.stop();
      umount(data);
      cleanup();
    },
  };
}

test("an increment that fails on a full disk leaves the state at the last acknowledged value", async () => {
  const h = await homeWithMountedData((dir) => tryMount(["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]));
  if (!h) return;
  const filler = join(h.data, "filler");
  try {
    const id = (await putActor(h.d.url, { name: "counter", key: "full" })).json.actor.actor_id as string;
    assert.is((await call(h.d.url, id, "increment", [5])).json.output, 5);
    fill(filler);

    const cli = await runCli(["actors", "call", id, "increment", "7"], { home: h.d.home, env: h.d.env });
    assert.is(cli.code, 1, cli.stderr);
    assert.match(cli.stderr, /disk full: cannot write .* \(ENOSPC\)/);
    assert.not.match(cli.stderr, /internal error/);
    for (let i = 0; i < 5; i++) {
      const r = await call(h.d.url, id, "increment", [1]);
      assert.is(r.status, 507, JSON.stringify(r.json));
      assert.is(`${r.json.group}.${r.json.code}`, "storage.disk_full", JSON.stringify(r.json));
    }
    // The daemon's logs (one file per component): the actor runtime's says what failed.
    const logs = join(h.d.home, "logs");
    const log = readdirSync(logs)
      .map((f) => readFileSync(join(logs, f), "utf8"))
      .join("");
    assert.match(log, /writing the actor file failed/, log.slice(-3000));
    assert.match(log, /"level":"error".*writing the actor file failed.*disk full: cannot write .*ENOSPC/);

    rmSync(filler);
    assert.is((await call(h.d.url, id, "get")).json.output, 5);
    assert.is((await call(h.d.url, id, "increment", [1])).json.output, 6);
    await h.d.stop();
    const again = await startDaemon({ home: h.d.home });
    try {
      assert.is((await call(again.url, id, "get")).json.output, 6);
    } finally {
      await again.stop();
    }
  } finally {
    await h.dispose();
  }
});

test("a KV put that fails on a full disk is not readable afterwards", async () => {
  const h = await homeWithMountedData((dir) => tryMount(["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]));
  if (!h) return;
  const filler = join(h.data, "filler");
  try {
    const id = (await putActor(h.d.url, { name: "counter", key: "kv" })).json.actor.actor_id as string;
    assert.is((await call(h.d.url, id, "get")).status, 200);
    fill(filler);
    const put = await call(h.d.url, id, "kvPut", ["k", "v"]);
    assert.is(put.status, 507, JSON.stringify(put.json));
    rmSync(filler);
    const got = await fetch(`${h.d.url}/actors/${id}/kv/keys/${Buffer.from("k").toString("base64")}`);
    assert.equal(await got.json(), { value: null });
  } finally {
    await h.dispose();
  }
});

test("an increment refused by a read-only store answers storage.read_only and changes nothing", async () => {
  // A bind mount of data/ onto itself, remounted read-only once the actor exists.
  const h = await homeWithMountedData((dir) => tryMount(["--bind", dir, dir]));
  if (!h) return;
  try {
    const id = (await putActor(h.d.url, { name: "counter", key: "ro" })).json.actor.actor_id as string;
    assert.is((await call(h.d.url, id, "increment", [3])).json.output, 3);
    const why = tryMount(["-o", "remount,bind,ro", h.data]);
    if (why !== null) {
      skip(`cannot remount ${h.data} read-only (${why})`);
      return;
    }
    const r = await call(h.d.url, id, "increment", [1]);
    assert.is(r.status, 503, JSON.stringify(r.json));
    assert.is(`${r.json.group}.${r.json.code}`, "storage.read_only");
    assert.match(r.json.message, /read-only file system: cannot write .* \(EROFS\)/);
    assert.is(tryMount(["-o", "remount,bind,rw", h.data]), null);
    await waitFor("the actor to answer from its saved state", async () => (await call(h.d.url, id, "get")).json.output === 3, 5000);
    assert.is((await call(h.d.url, id, "increment", [1])).json.output, 4);
  } finally {
    await h.dispose();
  }
});

test("a queue message refused on a full disk is never delivered later", async () => {
  const h = await homeWithMountedData((dir) => tryMount(["-t", "tmpfs", "-o", "size=2m", "tmpfs", dir]));
  if (!h) return;
  const filler = join(h.data, "filler");
  const enqueue = async (id: string, body: unknown, wait: boolean) => {
    const r = await fetch(`${h.d.url}/gateway/${id}/queue/job`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ body, wait }),
    });
    return { status: r.status, json: (await r.json()) as any };
  };
  try {
    const id = (await putActor(h.d.url, { name: "inbox", key: "q" })).json.actor.actor_id as string;
    assert.is((await enqueue(id, "first", false)).status, 200);
    fill(filler);
    const refused = await enqueue(id, "lost", false);
    assert.is(refused.status, 507, JSON.stringify(refused.json));
    assert.is(refused.json.code, "disk_full");
    rmSync(filler);
    assert.is((await call(h.d.url, id, "size")).json.output, 1);
    assert.is((await enqueue(id, "second", false)).status, 200);
    assert.is((await call(h.d.url, id, "size")).json.output, 2, "only the two acknowledged messages are queued");
  } finally {
    await h.dispose();
  }
});

test.run();
