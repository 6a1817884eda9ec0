// JSON requests over kept-alive sockets: for benchmarks and tests that make thousands of gateway
// calls, where `fetch` costs the caller more CPU than the daemon answering them.
import http from "node:http";

/**
 * A request function over at most `maxSockets` kept-alive sockets; it resolves with the status
 * and the parsed body (null when empty). `request.close()` ends its sockets.
 */
export function keepAliveJson(maxSockets) {
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
            resolve({ status: res.statusCode ?? 0, json: text ? JSON.parse(text) : null });
          });
          res.on("error", reject);
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  };
  request.close = () => agent.destroy();
  return request;
}
