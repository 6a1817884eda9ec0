import { Agent as HttpAgent, request as httpRequest, type AgentOptions } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import type { Duplex } from "node:stream";
import { connect as tlsConnect } from "node:tls";

/**
 * An agent that reaches its host through an HTTP proxy's CONNECT tunnel (`telegram.proxy_url`,
 * `TELEGRAM_PROXY`): for an `https:` API root the TLS session runs inside the tunnel, for an
 * `http:` one (a local Bot API server) the request does. Proxy credentials in the URL are sent
 * as Proxy-Authorization.
 */
export function proxyAgent(proxyUrl: string, target: "http:" | "https:"): HttpAgent {
  const proxy = new URL(proxyUrl);
  if (proxy.protocol !== "http:") throw new Error(`only http:// proxies are supported; got ${proxy.protocol}//`);
  const auth = proxy.username ? `Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}` : null;
  const tunnel = (host: string, port: number, cb: (err: Error | null, socket?: Duplex) => void) => {
    const req = httpRequest({
      host: proxy.hostname,
      port: Number(proxy.port || 80),
      method: "CONNECT",
      path: `${host}:${port}`,
      headers: { host: `${host}:${port}`, ...(auth ? { "proxy-authorization": auth } : {}) },
    });
    req.once("connect", (res, socket) => {
      if (res.statusCode !== 200) {
        socket.destroy();
        cb(new Error(`the proxy refused the tunnel to ${host}:${port} (HTTP ${res.statusCode})`));
        return;
      }
      cb(null, socket);
    });
    req.once("error", (e) => cb(e));
    req.end();
  };
  const opts: AgentOptions = { keepAlive: true };
  if (target === "https:") {
    class TunnelHttps extends HttpsAgent {
      override createConnection(o: any, cb: any): any {
        tunnel(o.host, Number(o.port || 443), (err, socket) => {
          if (err || !socket) return cb(err);
          cb(null, tlsConnect({ socket, servername: o.servername ?? o.host }));
        });
        return undefined;
      }
    }
    return new TunnelHttps(opts) as unknown as HttpAgent;
  }
  class TunnelHttp extends HttpAgent {
    override createConnection(o: any, cb: any): any {
      tunnel(o.host, Number(o.port || 80), (err, socket) => cb(err, socket));
      return undefined;
    }
  }
  return new TunnelHttp(opts);
}
