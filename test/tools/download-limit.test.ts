// A vendor's file download (video_generate's video and poster) has a size limit: a body past it,
// announced by Content-Length or only streamed, fails the download and leaves no file behind.
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { download } from "../../daemon/agent/tools/upstream-http.js";

let server: Server;
let base: string;
let dir: string;

test.before(async () => {
  dir = mkdtempSync(join(tmpdir(), "dl-limit-"));
  server = createServer((req, res) => {
    const body = Buffer.alloc(64 * 1024, 1);
    if (req.url === "/declared") {
      res.writeHead(200, { "content-length": body.length });
      return res.end(body);
    }
    // Streamed with no length: chunk after chunk.
    res.writeHead(200, { "content-type": "video/mp4" });
    for (let i = 0; i < 16; i++) res.write(body);
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

test.after(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

test("within the limit the file is saved", async () => {
  const size = await download(`${base}/declared`, join(dir, "ok.mp4"), new AbortController().signal, "the video", 1024 * 1024);
  assert.is(size, 64 * 1024);
  assert.ok(existsSync(join(dir, "ok.mp4")));
});

for (const path of ["/declared", "/streamed"]) {
  test(`past the limit (${path.slice(1)}): refused, nothing left on disk`, async () => {
    const file = join(dir, `big${path.replace("/", "-")}.mp4`);
    const error = await download(`${base}${path}`, file, new AbortController().signal, "the video", 16 * 1024).catch((e) => e);
    assert.instance(error, Error);
    assert.match(String(error.message), /the video: larger than 16384 bytes/);
    assert.not.ok(existsSync(file));
    assert.not.ok(
      readdirSync(dir).some((f) => f.endsWith(".part")),
      readdirSync(dir).join(","),
    );
  });
}

test.run();
