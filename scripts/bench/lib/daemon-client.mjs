// What the actor benchmarks share: the built CLI against a home, and a keep-alive JSON client
// for the daemon's gateway.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { keepAliveJson } from "./keep-alive-json.mjs";

export const ROOT = fileURLToPath(new URL("../../..", import.meta.url));
const CLI = join(ROOT, "dist", "cli", "main.js");

/** `agent <argv>` on `home` (gateway on a free port, no module watcher); resolves with its stdout. */
export function agentCli(home, argv, timeoutMs = 600_000, cli = CLI) {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [cli, ...argv],
      { env: { ...process.env, AGENT_HOME: home, AGENT_GATEWAY_PORT: "0", AGENT_ACTORS_WATCH: "0" }, timeout: timeoutMs, maxBuffer: 64 << 20 },
      (error, stdout, stderr) => {
        if (error) reject(new Error(`agent ${argv.join(" ")}: ${error.message}\n${stderr}`));
        else resolve(stdout);
      },
    );
  });
}

/**
 * A JSON request function over keep-alive sockets (at most `maxSockets`); a status ≥ 300
 * rejects. `request.close()` ends its sockets, so the benchmark's process can exit.
 */
export function jsonClient(maxSockets) {
  const call = keepAliveJson(maxSockets);
  const request = async (base, method, path, body) => {
    const { status, json } = await call(base, method, path, body);
    if (status >= 300) throw new Error(`${method} ${path}: ${status} ${JSON.stringify(json).slice(0, 300)}`);
    return json;
  };
  request.close = call.close;
  return request;
}
