// What the socket and CLI benchmarks share: a median, a timed `node` run, and a JSON-RPC
// connection to a home's daemon socket, as the CLI makes one.
import { spawnSync } from "node:child_process";
import { connect } from "node:net";
import { join } from "node:path";
import { createMessageConnection, SocketMessageReader, SocketMessageWriter } from "vscode-jsonrpc/node";

/** The median of a list of numbers (the mean of the middle two for an even count). */
export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

/** `node <args>` with `env`, timed; throws unless it exits 0. */
export function timeNode(env, args) {
  const t0 = process.hrtime.bigint();
  const r = spawnSync(process.execPath, args, { env, stdio: ["ignore", "pipe", "pipe"], maxBuffer: 1 << 30 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
  return { ms, stdout: r.stdout.toString() };
}

/** A JSON-RPC connection to the daemon of `home`, past `initialize`; `close()` ends it. */
export async function rpcClient(home) {
  const socket = connect(join(home, "daemon.sock"));
  await new Promise((resolve, reject) => (socket.once("connect", resolve), socket.once("error", reject)));
  const rpc = createMessageConnection(new SocketMessageReader(socket), new SocketMessageWriter(socket));
  rpc.listen();
  await rpc.sendRequest("initialize", { protocolVersion: 1, clientVersion: "bench" });
  return { rpc, close: () => (rpc.dispose(), socket.destroy()) };
}
