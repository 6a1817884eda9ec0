// The packing thread's own tar header (daemon/backup/tar-header.ts) is node-tar's `Header` for
// the same entry, byte for byte, and declines what needs node-tar (long or non-ASCII paths, huge sizes).
import { Header } from "tar";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeTarHeader } from "../../daemon/backup/tar-header.js";

const tars = (path: string, mode: number, size: number, mtime: Date | undefined, type: "File" | "Directory") => {
  const h = new Header({ path, mode, size, mtime, type });
  const pax = h.encode();
  return { pax, block: h.block! };
};

test("files and folders: the same 512 bytes as node-tar's Header", () => {
  const paths = ["a", "data/actors/ab/00ymqsk20ihn5ac6.json", "data/actors/ab/", "agent-backup.json", "x".repeat(99), "logs/"];
  const modes = [0o600, 0o644, 0o700, 0o755, 0o4755, 0o7777];
  const sizes = [0, 1, 511, 512, 123_456, 0o7777777, 2 ** 31, 0o77777777777];
  const times = [new Date(0), new Date("2026-11-28T08:31:55.700Z"), new Date(1_000), new Date(4_102_444_800_000)];
  let n = 0;
  for (const path of paths)
    for (const mode of modes)
      for (const size of sizes)
        for (const mtime of [...times, undefined]) {
          const dir = path.endsWith("/");
          if (dir && (size !== 0 || mtime)) continue;
          const want = tars(path, mode, size, mtime, dir ? "Directory" : "File");
          assert.not.ok(want.pax, `${path}: no pax needed`);
          const out = Buffer.alloc(1024, 0xaa);
          assert.ok(writeTarHeader(out, 256, path, mode, size, mtime, dir ? "5" : "0"), `${path} ${mode} ${size}`);
          assert.ok(out.subarray(256, 768).equals(want.block), `${path} mode ${mode.toString(8)} size ${size} ${mtime?.toISOString()}`);
          assert.is(out[255], 0xaa, "nothing before");
          assert.is(out[768], 0xaa, "nothing after");
          n++;
        }
  assert.ok(n > 500, `${n} headers compared`);
});

test("what needs node-tar is declined: paths of 100 bytes or more or not ASCII, sizes past the field", () => {
  const out = Buffer.alloc(512);
  // node-tar splits a path of 100 bytes or more into its prefix field (or a pax header).
  assert.not.ok(writeTarHeader(out, 0, "z".repeat(100), 0o644, 1, new Date(), "0"));
  assert.not.ok(writeTarHeader(out, 0, "notes/é.md", 0o644, 1, new Date(), "0"));
  assert.not.ok(writeTarHeader(out, 0, "big.bin", 0o644, 0o77777777777 + 1, new Date(), "0"));
});

test.run();
