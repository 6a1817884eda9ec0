/**
 * RPC handler registration (issue 34 §2): a method handled twice, or a method of the RPC table
 * (shared/protocol/) with no handler, fails the daemon's start (daemon/main.ts calls
 * `assertComplete` before the socket listens) instead of a silent replacement or a
 * "not available in this daemon" at call time.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { AgentError } from "../../shared/errors.js";
import { isRegisteredCode } from "../../shared/error-codes.js";
import { methods } from "../../shared/protocol/index.js";
import { silentLogger } from "../../daemon/log/logger.js";
import { RpcServer } from "../../daemon/rpc/server.js";

const server = () =>
  new RpcServer({
    socketPath: "/nonexistent/agent-test.sock",
    log: silentLogger,
    initializeResult: () => ({ protocolVersion: 0, daemonVersion: "x", pid: 0, home: "/" }),
  });

function thrown(fn: () => void): AgentError {
  try {
    fn();
  } catch (error) {
    return error as AgentError;
  }
  throw new Error("expected a throw");
}

test("a second handler for a method is refused, naming the method; the first one stays", () => {
  const rpc = server();
  rpc.register({ "kanban.stats": () => ({}) as never });
  const e = thrown(() => rpc.register({ "cron.list": () => ({}) as never, "kanban.stats": () => ({}) as never }));
  assert.is(e.code, "rpc.duplicate_handler");
  assert.match(e.message, /kanban\.stats/);
  assert.not.match(e.message, /cron\.list/);
  // The server's own methods count too.
  assert.is(thrown(() => rpc.register({ ping: () => ({ pong: true, at: 0 }) })).code, "rpc.duplicate_handler");
});

test("a method of the RPC table with no handler fails the check, naming every one", () => {
  const rpc = server();
  const e = thrown(() => rpc.assertComplete());
  assert.is(e.code, "rpc.missing_handler");
  assert.match(e.message, /kanban\.stats/);
  assert.match(e.message, /backup\.create/);
  assert.not.ok((e.metadata!.methods as string[]).includes("ping"), "the server handles ping itself");
  assert.ok(isRegisteredCode("rpc.missing_handler") && isRegisteredCode("rpc.duplicate_handler"));
});

test("with every method of the table handled, the check passes", () => {
  const rpc = server();
  const rest = Object.fromEntries(
    Object.keys(methods)
      .filter((m) => !["initialize", "ping", "events.subscribe", "events.unsubscribe"].includes(m))
      .map((m) => [m, () => ({})]),
  );
  rpc.register(rest as never);
  rpc.assertComplete();
});

test.run();
