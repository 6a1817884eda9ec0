// A daemon that dies (kill -9) or stops just as a client connects accepts the connection and
// closes it before answering `initialize`. The client must not wait forever: it asks once more,
// and then says the daemon is gone. Here the "daemon" is a socket that accepts and closes.
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { AgentError } from "../../shared/errors.js";

async function dyingDaemon(home: string): Promise<{ server: Server; accepted: () => number }> {
  let accepted = 0;
  const server = createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(join(home, "daemon.sock"), resolve));
  return { server, accepted: () => accepted };
}

test("a connection closed before initialize is answered fails with daemon.disconnected after one more try", async () => {
  const home = mkdtempSync(join(tmpdir(), "cd-"));
  const { server, accepted } = await dyingDaemon(home);
  try {
    const started = Date.now();
    const error = await connectDaemon({ home, autostart: false }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.ok(error instanceof AgentError, String(error));
    assert.is((error as AgentError).code, "daemon.disconnected");
    assert.is(accepted(), 2, "asked once more");
    assert.ok(Date.now() - started < 5000, "no waiting on a closed connection");
  } finally {
    server.close();
    rmSync(home, { recursive: true, force: true });
  }
});

test("a daemon gone by the second try is not running (autostart off)", async () => {
  const home = mkdtempSync(join(tmpdir(), "cd-"));
  const server = createServer((socket) => {
    socket.destroy();
    server.close();
  });
  await new Promise<void>((resolve) => server.listen(join(home, "daemon.sock"), resolve));
  try {
    const error = await connectDaemon({ home, autostart: false }).then(
      () => null,
      (e: unknown) => e,
    );
    assert.is((error as AgentError)?.code, "daemon.not_running", String(error));
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();
