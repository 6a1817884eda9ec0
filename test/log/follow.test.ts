// The one log follower (shared/log-follow.ts), driven poll by poll against real files: rotation
// by rename (lines written to the old file just before it count), several rotations between two
// polls, truncation in place, a partial last line, a multi-byte character cut between reads, a
// missing file that appears later, and the last lines of a rotated log.
import { appendFileSync, mkdtempSync, renameSync, rmSync, truncateSync, unlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LogFollower, readLastLines } from "../../shared/log-follow.js";

let dir: string;
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), "follow-"));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

function follow(file: string, from?: ConstructorParameters<typeof LogFollower>[1]["from"]) {
  const lines: string[] = [];
  let text = "";
  const f = new LogFollower(file, { from, onLines: (got) => lines.push(...got), onText: (t) => (text += t) });
  return { f, lines, text: () => text };
}

test("from the end: only what is appended is read", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "old\n");
  const { f, lines } = follow(file);
  f.poll();
  appendFileSync(file, "a\nb\n");
  f.poll();
  assert.equal(lines, ["a", "b"]);
  f.stop();
});

test("rotation by rename: the old file's last lines, then the new file from its start", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "old\n");
  const { f, lines } = follow(file);
  f.poll();
  appendFileSync(file, "a\n");
  f.poll();
  appendFileSync(file, "b\n"); // written just before the rotation
  renameSync(file, `${file}.1`);
  f.poll(); // the new file is not there yet: nothing is lost meanwhile
  writeFileSync(file, "c\n");
  appendFileSync(file, "d\n");
  f.poll();
  assert.equal(lines, ["a", "b", "c", "d"]);
  f.stop();
});

test("several rotations between two polls: the files rotated away unseen are read too", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "");
  const { f, lines } = follow(file);
  f.poll();
  appendFileSync(file, "1\n");
  const rotate = () => {
    for (let i = 3; i >= 1; i--) {
      try {
        renameSync(i === 1 ? file : `${file}.${i - 1}`, `${file}.${i}`);
      } catch {}
    }
  };
  // Rotated three times, with lines each time: the file the follower had open ends up as .3.
  rotate();
  writeFileSync(file, "2\n");
  rotate();
  writeFileSync(file, "3\n");
  rotate();
  writeFileSync(file, "4\n");
  f.poll();
  assert.equal(lines, ["1", "2", "3", "4"]);
  f.stop();
});

test("truncation in place: what is written after it is read from the file's start", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "one\ntwo\n");
  const { f, lines } = follow(file);
  f.poll();
  truncateSync(file, 0);
  appendFileSync(file, "new\n");
  f.poll();
  assert.equal(lines, ["new"]);
  f.stop();
});

test("a partial last line waits for its end; a multi-byte character cut between reads stays whole", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "");
  const { f, lines, text } = follow(file);
  f.poll();
  const euro = Buffer.from("€");
  appendFileSync(file, Buffer.concat([Buffer.from("price 5"), euro.subarray(0, 1)]));
  f.poll();
  assert.equal(lines, []);
  assert.is(text(), "price 5");
  appendFileSync(file, Buffer.concat([euro.subarray(1), Buffer.from(" ok\nnext")]));
  f.poll();
  assert.equal(lines, ["price 5€ ok"]);
  appendFileSync(file, "\n");
  f.poll();
  assert.equal(lines, ["price 5€ ok", "next"]);
  assert.is(text(), "price 5€ ok\nnext\n");
  f.stop();
});

test("a missing file is followed from its start once it appears, and again after it is removed and recreated", () => {
  const file = join(dir, "later.log");
  const { f, lines } = follow(file);
  assert.is(f.poll(), 0);
  writeFileSync(file, "first\n");
  f.poll();
  unlinkSync(file);
  f.poll();
  writeFileSync(file, "second\n");
  f.poll();
  assert.equal(lines, ["first", "second"]);
  f.stop();
});

test("from an offset, from the start, and the whole lines within the last bytes", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "alpha\nbeta\ngamma\n");
  const a = follow(file, 6);
  a.f.poll();
  assert.equal(a.lines, ["beta", "gamma"]);
  const b = follow(file, "start");
  b.f.poll();
  assert.equal(b.lines, ["alpha", "beta", "gamma"]);
  const c = follow(file, { tailBytes: 8 });
  c.f.poll();
  assert.equal(c.lines, ["gamma"], "the cut line 'ta' is left out");
  const d = follow(file, 1000);
  d.f.poll();
  assert.equal(d.lines, ["alpha", "beta", "gamma"], "an offset past the end: the file was replaced");
  for (const x of [a, b, c, d]) x.f.stop();
});

test("start() polls on a timer until stop(); nothing is read after stop()", async () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "");
  const { f, lines } = follow(file);
  f.start(10);
  appendFileSync(file, "tick\n");
  const deadline = Date.now() + 5000;
  while (lines.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.equal(lines, ["tick"]);
  f.stop();
  appendFileSync(file, "after\n");
  await new Promise((r) => setTimeout(r, 50));
  assert.is(f.poll(), 0);
  assert.equal(lines, ["tick"]);
});

test("readLastLines reaches into rotated files and says where the current file ended", () => {
  const file = join(dir, "x.log");
  writeFileSync(`${file}.2`, "1\n2\n");
  writeFileSync(`${file}.1`, "3\n\n4\n");
  writeFileSync(file, "5\n6\n");
  assert.equal(readLastLines(file, 3), { lines: ["4", "5", "6"], end: 4 });
  assert.equal(readLastLines(file, 10).lines, ["1", "2", "3", "4", "5", "6"]);
  assert.equal(readLastLines(file, 0), { lines: [], end: 4 });
  assert.equal(readLastLines(join(dir, "none.log"), 5), { lines: [], end: 0 });
  const big = join(dir, "big.log");
  writeFileSync(big, Array.from({ length: 20_000 }, (_, i) => `line ${i}`).join("\n") + "\n");
  assert.equal(readLastLines(big, 2).lines, ["line 19998", "line 19999"]);
});

test.run();
