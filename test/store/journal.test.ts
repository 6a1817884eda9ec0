// The one journal (daemon/store/journal.ts): appends, the torn last line cut on load, one fsync
// per event-loop turn under `storage.durability: power` (counted through an injected fs), a
// failed append that leaves nothing behind, snapshot and fold, generations, and a reopen after
// a writer was killed with -9 in the middle of its appends.
import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { setDurability } from "../../daemon/store/durability.js";
import { Journal, type JournalFs, journalGenerations, jsonLine, parseJsonLines, readJournalLines, realJournalFs } from "../../daemon/store/journal.js";
import { AgentError } from "../../shared/errors.js";
import { ROOT, tempHome } from "../helpers/cli.js";
import { TS_LOADER } from "../helpers/ts-loader.js";

const turn = () => new Promise((r) => setImmediate(r));

/** The real fs, counting fsyncs. */
function countingFs(): JournalFs & { fsyncs: number } {
  const fs = { ...realJournalFs, fsyncs: 0 };
  fs.fsyncSync = (fd: number) => {
    fs.fsyncs++;
    realJournalFs.fsyncSync(fd);
  };
  return fs;
}

test.after.each(() => setDurability("process"));

test("appended lines are read back in order; a missing journal reads as empty", () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "deep", "j.jsonl");
    const j = new Journal(file);
    assert.equal(j.loadLines(), []);
    j.append(jsonLine({ n: 1 }));
    j.append(jsonLine({ n: 2 }) + jsonLine({ n: 3 }));
    assert.is(j.lines, 3);
    j.close();
    const again = new Journal(file);
    assert.equal(parseJsonLines(again.loadLines()), [{ n: 1 }, { n: 2 }, { n: 3 }]);
    assert.is(again.lines, 3);
    assert.is(again.bytes, readFileSync(file).length);
  } finally {
    cleanup();
  }
});

test("a torn last line is cut off on load, and the next append starts a line of its own", () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "j.jsonl");
    writeFileSync(file, `${jsonLine({ n: 1 })}${jsonLine({ n: 2 })}{"n":3,"tor`);
    const j = new Journal(file);
    assert.equal(parseJsonLines(j.loadLines()), [{ n: 1 }, { n: 2 }]);
    assert.is(readFileSync(file, "utf8"), `${jsonLine({ n: 1 })}${jsonLine({ n: 2 })}`, "the torn line is gone from the file");
    j.append(jsonLine({ n: 4 }));
    j.close();
    assert.equal(parseJsonLines(new Journal(file).loadLines()), [{ n: 1 }, { n: 2 }, { n: 4 }]);
  } finally {
    cleanup();
  }
});

test("under power, the appends of one turn share one fsync, and durable() resolves after it", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    setDurability("power");
    const fs = countingFs();
    const j = new Journal(join(home, "j.jsonl"), { fs });
    for (let i = 0; i < 50; i++) j.append(jsonLine({ i }));
    const durable = j.durable();
    assert.is(fs.fsyncs, 0, "nothing is fsynced before the turn ends");
    await durable;
    assert.is(fs.fsyncs, 1, "one fsync for the 50 appends of the turn");
    for (let i = 0; i < 5; i++) j.append(jsonLine({ i }));
    await j.durable();
    assert.is(fs.fsyncs, 2, "the next turn's appends: one more");
    await j.durable();
    await turn();
    assert.is(fs.fsyncs, 2, "nothing appended: no fsync");
    // A caller that acknowledges synchronously syncs at once; the turn's scheduled sync then has nothing to do.
    j.append(jsonLine({ now: true }));
    j.sync();
    assert.is(fs.fsyncs, 3);
    await turn();
    await turn();
    assert.is(fs.fsyncs, 3);
    j.close();
  } finally {
    cleanup();
  }
});

test("under process, nothing is fsynced", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const fs = countingFs();
    const j = new Journal(join(home, "j.jsonl"), { fs });
    for (let i = 0; i < 10; i++) j.append(jsonLine({ i }));
    j.sync();
    await j.durable();
    await turn();
    j.close();
    assert.is(fs.fsyncs, 0);
  } finally {
    cleanup();
  }
});

test("an append the disk refuses half-way leaves no part of it, and says why", () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "j.jsonl");
    let full = false;
    const fs: JournalFs = {
      ...realJournalFs,
      writeSync: (fd, buffer, offset, length) => {
        if (!full) return realJournalFs.writeSync(fd, buffer, offset, length);
        // Part of the line reaches the file, then the disk is full.
        realJournalFs.writeSync(fd, buffer, offset, Math.min(5, length));
        throw Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" });
      },
    };
    const j = new Journal(file, { fs });
    j.append(jsonLine({ ok: 1 }));
    full = true;
    const error = (() => {
      try {
        j.append(jsonLine({ lost: "a long enough line" }));
      } catch (e) {
        return e;
      }
    })();
    assert.instance(error, AgentError);
    assert.is((error as AgentError).code, "storage.disk_full");
    assert.match((error as AgentError).message, file);
    assert.is(readFileSync(file, "utf8"), jsonLine({ ok: 1 }), "the part written was cut back off");
    full = false;
    j.append(jsonLine({ ok: 2 }));
    j.close();
    assert.equal(parseJsonLines(new Journal(file).loadLines()), [{ ok: 1 }, { ok: 2 }]);
  } finally {
    cleanup();
  }
});

test("fold writes the snapshot, then drops the folded lines; lines appended meanwhile stay", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "j.jsonl");
    const j = new Journal(file);
    for (let i = 0; i < 3; i++) j.append(jsonLine({ i }));
    let snapshotOf = -1;
    await j.fold(async (lines) => {
      snapshotOf = lines;
      // Appended while the snapshot is on its way: not in it, so it must stay.
      j.append(jsonLine({ late: true }));
      await turn();
    });
    assert.is(snapshotOf, 3);
    assert.equal(parseJsonLines(readFileSync(file, "utf8").split("\n").filter(Boolean)), [{ late: true }]);
    assert.is(j.lines, 1);
    // A fold that writes nothing (the owner is closing) keeps the lines.
    await j.fold(async () => false);
    assert.is(j.lines, 1);
    // A fold whose snapshot write fails keeps them too, and reports the failure.
    const failed = await j.fold(async () => Promise.reject(new Error("disk gone"))).catch((e: Error) => e.message);
    assert.is(failed, "disk gone");
    assert.is(j.lines, 1);
    await j.fold(async () => undefined);
    assert.is(j.lines, 0);
    assert.is(readFileSync(file, "utf8"), "");
    j.close();
  } finally {
    cleanup();
  }
});

test("folds asked for while one runs run after it, one at a time", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const j = new Journal(join(home, "j.jsonl"));
    const order: string[] = [];
    j.append(jsonLine({ a: 1 }));
    const first = j.fold(async (lines) => {
      order.push(`start1:${lines}`);
      j.append(jsonLine({ b: 1 }));
      await turn();
      order.push("end1");
    });
    const second = j.fold(async (lines) => {
      order.push(`start2:${lines}`);
    });
    await Promise.all([first, second]);
    assert.equal(order, ["start1:1", "end1", "start2:1"]);
    assert.is(j.lines, 0);
    j.close();
  } finally {
    cleanup();
  }
});

test("retain keeps the lines asked for; readJournalLines reads without changing the file", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "j.jsonl");
    const j = new Journal(file);
    for (let i = 0; i < 6; i++) j.append(jsonLine({ i }));
    j.retain((line) => (JSON.parse(line) as { i: number }).i % 2 === 0);
    assert.is(j.lines, 3);
    j.append(jsonLine({ i: 7 }));
    writeFileSync(file, `${readFileSync(file, "utf8")}{"torn`);
    assert.equal(parseJsonLines(await readJournalLines(file)), [{ i: 0 }, { i: 2 }, { i: 4 }, { i: 7 }]);
    assert.equal(parseJsonLines(await readJournalLines(file, 2)), [{ i: 0 }, { i: 2 }]);
    assert.match(readFileSync(file, "utf8"), /\{"torn$/, "a reader that does not own the journal leaves it as it is");
    assert.equal(await readJournalLines(join(home, "none")), []);
    j.close();
  } finally {
    cleanup();
  }
});

test("generations: a new one is created at once, and they are listed oldest first", () => {
  const { home, cleanup } = tempHome("journal");
  try {
    setDurability("power");
    for (const g of [0, 2, 10]) Journal.startGeneration(home, "x.journal.", g).close();
    writeFileSync(join(home, "x.journal.tmp"), "");
    assert.ok(existsSync(join(home, "x.journal.10")));
    assert.equal(journalGenerations(home, "x.journal."), [0, 2, 10]);
    assert.equal(journalGenerations(join(home, "none"), "x.journal."), []);
  } finally {
    cleanup();
  }
});

test("a writer killed with -9 in the middle of its appends leaves a journal that loads whole", async () => {
  const { home, cleanup } = tempHome("journal");
  try {
    const file = join(home, "j.jsonl");
    const script = `
      import { Journal, jsonLine } from ${JSON.stringify(join(ROOT, "daemon", "store", "journal.ts"))};
      const j = new Journal(${JSON.stringify(file)});
      const pad = "x".repeat(3000);
      let i = 0;
      process.stdout.write("ready\\n");
      for (;;) j.append(jsonLine({ i: i++, pad }));
    `;
    const child = spawn(process.execPath, [...TS_LOADER, "--input-type=module", "-e", script], { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] });
    await new Promise<void>((resolve) => child.stdout.once("data", () => resolve()));
    // Let it append for a while, then kill it wherever it is.
    while (!existsSync(file) || readFileSync(file).length < 2_000_000) await new Promise((r) => setTimeout(r, 20));
    child.kill("SIGKILL");
    await new Promise((r) => child.once("exit", r));
    const j = new Journal(file);
    const lines = parseJsonLines<{ i: number }>(j.loadLines());
    assert.ok(lines.length > 100);
    assert.equal(
      lines.map((l) => l.i),
      lines.map((_, i) => i),
      "every line is whole and in order",
    );
    j.append(jsonLine({ i: lines.length, pad: "" }));
    j.close();
    assert.is(parseJsonLines(new Journal(file).loadLines()).length, lines.length + 1);
  } finally {
    cleanup();
  }
});

test.run();
