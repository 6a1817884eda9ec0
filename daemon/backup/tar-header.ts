/**
 * A tar header for the packing thread (pack-thread.ts), written straight into its batch: the
 * same 512 bytes node-tar's `Header` encodes for `{ path, mode, size, mtime, type }` (ustar, no
 * owner, no pax), for the common case only, where that took a tenth or more of the packing's
 * CPU at 200,000 files. `test/backup/tar-header.test.ts` compares the two byte for byte.
 */

const BLOCK = 512;
/** The largest number a NUL-terminated octal field of 8 and 12 bytes holds. */
const MAX8 = 0o7777777;
const MAX12 = 0o77777777777;

/** node-tar's octal field: zero-padded, then a space and a NUL (or only a NUL when the digits fill it). */
function octal(out: Buffer, at: number, size: number, n: number): void {
  const digits = Math.floor(n).toString(8);
  const text = digits.length === size - 1 ? `${digits}\0` : `${"0".repeat(size - digits.length - 2)}${digits} \0`;
  out.write(text, at, size, "latin1");
}

/**
 * Write the header of a file (`type` "0") or folder ("5", its path ending with `/`) at `at` in
 * `out`; false (nothing written) when the entry needs more than this: a path of 100 bytes or more or
 * not ASCII (a prefix field or a pax header), or a size past the octal field (8 GiB).
 */
export function writeTarHeader(out: Buffer, at: number, path: string, mode: number, size: number, mtime: Date | undefined, type: "0" | "5"): boolean {
  if (path.length >= 100 || size > MAX12 || size < 0 || mode > MAX8 || mode < 0) return false;
  for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) > 0x7f) return false;
  const seconds = mtime ? mtime.getTime() / 1000 : undefined;
  if (seconds !== undefined && !(seconds >= 0 && seconds <= MAX12)) return false;
  out.fill(0, at, at + BLOCK);
  out.write(path, at, 100, "latin1");
  octal(out, at + 100, 8, mode);
  octal(out, at + 124, 12, size);
  if (seconds !== undefined) octal(out, at + 136, 12, seconds);
  out[at + 156] = type.charCodeAt(0);
  out.write("ustar\u000000", at + 257, 8, "latin1");
  // Device numbers 0, as node-tar writes them; no owner's ids or names (a portable archive).
  octal(out, at + 329, 8, 0);
  octal(out, at + 337, 8, 0);
  // The checksum: every byte, its own field counted as eight spaces.
  let sum = 8 * 0x20;
  for (let i = at; i < at + 148; i++) sum += out[i]!;
  for (let i = at + 156; i < at + BLOCK; i++) sum += out[i]!;
  octal(out, at + 148, 8, sum);
  return true;
}
