// What the actor benchmarks share: the built CLI against a home, and a keep-alive JSON client
// for the daemon's gateway.
import { execFile } from "node:child_process";
import http from "node:http";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

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
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const request = (base, method, path, body) => {
    const url = new URL(path, base);
    const payload = body === undefined ? null : Buffer.from(JSON.stringify(body));
    return new Promise((resolve, reject) => {
      const req = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname + url.search,
          method,
          agent,
          headers: payload ? { "content-type": "application/json", "content-length": payload.length } : {},
        },
        (res) => {
          const chunks = [];
          res.on("data", (d) => chunks.push(d));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString();
            if (res.statusCode >= 300) reject(new Error(`${method} ${path}: ${res.statusCode} ${text.slice(0, 300)}`));
            else resolve(text ? JSON.parse(text) : null);
          });
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  };
  request.close = () => agent.destroy();
  return request;
}
