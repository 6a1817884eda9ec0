import http from "node:http";

/**
 * JSON requests over kept-alive sockets (at most `maxSockets`): for tests that make thousands of
 * gateway calls, where `fetch` costs the test process more CPU than the daemon answering them.
 * Resolves with the status and the parsed body (null when empty); `close()` ends the sockets.
 */
export function keepAliveJson(maxSockets: number) {
  const agent = new http.Agent({ keepAlive: true, maxSockets });
  const call = (base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }> => {
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
          const chunks: Buffer[] = [];
          res.on("data", (d: Buffer) => chunks.push(d));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString();
            resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  };
  return Object.assign(call, { close: () => agent.destroy() });
}
