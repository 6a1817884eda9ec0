import { constants } from "node:fs";
import { open } from "node:fs/promises";

/**
 * Read a file the user (or a distribution) put in the home, which may be anything: only a
 * regular file up to `maxBytes` is read, and within `timeoutMs`. It is opened non-blocking, so
 * a FIFO (or a device) is refused at once instead of holding a thread of the pool forever; what
 * it is comes from the opened descriptor, so it cannot be swapped between a check and the read.
 * Throws an Error whose message is the reason, written to follow the file's name.
 */
export async function readRegularFile(file: string, options: { maxBytes: number; timeoutMs: number; what?: string }): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`did not finish reading within ${options.timeoutMs} ms`)), options.timeoutMs);
    timer.unref();
  });
  const read = (async () => {
    const fh = await open(file, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`is not a regular file (${kindOf(st)})`);
      if (st.size > options.maxBytes) throw new Error(`is ${st.size} bytes, more than the ${options.maxBytes} ${options.what ?? "such a file"} may have`);
      const buf = Buffer.alloc(Math.min(st.size, options.maxBytes) + 1);
      let n = 0;
      for (;;) {
        const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n > options.maxBytes) throw new Error(`is more than the ${options.maxBytes} bytes ${options.what ?? "such a file"} may have`);
        if (n === buf.length) break;
      }
      return buf.subarray(0, n).toString("utf8");
    } finally {
      await fh.close().catch(() => undefined);
    }
  })();
  try {
    return await Promise.race([read, limit]);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    if (e.code === "ENOENT") throw new Error("does not exist");
    if (e.code === "ELOOP") throw new Error("is a symlink loop");
    if (e.code === "ENXIO") throw new Error("is not a regular file (a socket or device)");
    throw new Error(e.code ? `cannot be read (${e.code})` : e.message);
  } finally {
    clearTimeout(timer);
  }
}

function kindOf(st: import("node:fs").Stats): string {
  if (st.isFIFO()) return "a FIFO";
  if (st.isDirectory()) return "a folder";
  if (st.isSocket()) return "a socket";
  if (st.isCharacterDevice() || st.isBlockDevice()) return "a device";
  return "not a file";
}
