// The one log follower (shared/log-follow.ts) against the one log writer (daemon/log/log-file.ts)
// when a burst rotates the file more often than `logs.keep` between two polls: the file the
// follower had open is deleted by the rotation, not found among `.1` … `.keep`. The rotated
// files still there are newer than it and were never read: they are read (oldest first) before
// the new file, and a file rotated before the follow began is not read again. A file truncated
// in place while a line was half read does not glue that half to the next line.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { LogFile } from "../../daemon/log/log-file.js";
import { LogFollower } from "../../shared/log-follow.js";

let dir: string;
test.before.each(() => {
  dir = mkdtempSync(join(tmpdir(), "follow-keep-"));
});
test.after.each(() => {
  rmSync(dir, { recursive: true, force: true });
});

test("rotated past keep between two polls: the surviving rotated files are read, then the new one", () => {
  const file = join(dir, "x.log");
  // Three lines of 10 bytes a file: every third line rotates.
  const log = new LogFile(file, { maxBytes: 30, keep: 2, redactor: null });
  const lines: string[] = [];
  const f = new LogFollower(file, { from: "start", onLines: (got) => lines.push(...got) });
  log.append("line 0000\n");
  f.poll();
  // 15 lines: the file the follower has open (lines 0-2) is rotated to .1, .2, then deleted.
  for (let i = 1; i < 15; i++) log.append(`line ${String(i).padStart(4, "0")}\n`);
  f.poll();
  // What the writer kept: the open file's lines (the follower holds it), .2, .1 and the file.
  const expected = [0, 1, 2, 6, 7, 8, 9, 10, 11, 12, 13, 14].map((i) => `line ${String(i).padStart(4, "0")}`);
  assert.equal(lines, expected);
  f.stop();
});

test("a file rotated before the follow began is not read again when the followed file is removed", () => {
  const file = join(dir, "x.log");
  writeFileSync(`${file}.1`, "older\n");
  writeFileSync(file, "a\n");
  const lines: string[] = [];
  const f = new LogFollower(file, { from: "start", onLines: (got) => lines.push(...got) });
  f.poll();
  // Someone removes the file and a writer starts a new one.
  rmSync(file);
  writeFileSync(file, "b\n");
  f.poll();
  assert.equal(lines, ["a", "b"]);
  f.stop();
});

test("a file truncated in place while a line was half written: the half line is not glued to the next one", () => {
  const file = join(dir, "x.log");
  writeFileSync(file, "whole\nhalf a li");
  const lines: string[] = [];
  const f = new LogFollower(file, { from: "start", onLines: (got) => lines.push(...got) });
  f.poll();
  // Emptied by hand (`: > x.log`) and written again.
  writeFileSync(file, "fresh\n");
  f.poll();
  assert.equal(lines, ["whole", "fresh"]);
  f.stop();
});

test.run();
