// A fake OpenAI-compatible upstream for the proxy tests, on 127.0.0.1: it records what it
// receives (method, path, headers, body) and answers by the request's model:
//   "slow"   never answers (the proxy's 504),
//   stream   SSE chunks; with model "gated" each chunk after the first waits for `release()`
//            (proves the proxy does not buffer),
//   else     one JSON completion.
// Tokens in `reject` get 401 once each.
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";

export interface Received {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
}

export interface FakeUpstream {
  url: string;
  /** The base URL a provider points at. */
  baseUrl: string;
  received: Received[];
  /** Bearer values to refuse with 401 (each once). */
  reject: Set<string>;
  /** Streams wait for this before each chunk after the first; call `release()` to send the next. */
  release(): void;
  /** Resolves when the upstream saw a streamed request's connection close before it finished. */
  aborted(): Promise<void>;
  close(): Promise<void>;
}

export const STREAM_WORDS = ["one", "two", "three"];

export async function startUpstream(): Promise<FakeUpstream> {
  const received: Received[] = [];
  const reject = new Set<string>();
  let waiters: Array<() => void> = [];
  let releases = 0;
  let onAbort: (() => void) | null = null;
  let abortedOnce = false;
  const nextRelease = () =>
    new Promise<void>((resolve) => {
      if (releases > 0) {
        releases--;
        resolve();
      } else waiters.push(resolve);
    });
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", async () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const path = req.url ?? "/";
      received.push({ method: req.method ?? "", path, headers: req.headers, body });
      const bearer = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1] ?? "";
      if (reject.delete(bearer)) {
        res.writeHead(401, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "invalid token", type: "invalid_request_error", code: "invalid_api_key" } }));
        return;
      }
      if (path === "/v1/models") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(JSON.stringify({ object: "list", data: [{ id: "m1", object: "model", created: 0, owned_by: "fake" }] }));
        return;
      }
      const parsed = body ? (JSON.parse(body) as { model?: string; stream?: boolean }) : {};
      const gated = parsed.model === "gated";
      if (parsed.model === "slow") return; // never answers
      if (path === "/v1/embeddings") {
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            object: "list",
            data: [{ object: "embedding", index: 0, embedding: [0.1, 0.2] }],
            model: "m1",
            usage: { prompt_tokens: 1, total_tokens: 1 },
          }),
        );
        return;
      }
      if (parsed.stream) {
        res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
        let finished = false;
        res.on("close", () => {
          if (!finished && !abortedOnce) {
            abortedOnce = true;
            onAbort?.();
          }
        });
        for (let i = 0; i < STREAM_WORDS.length; i++) {
          if (i > 0 && gated) await nextRelease();
          if (res.destroyed) return;
          const chunk = {
            id: "c1",
            object: "chat.completion.chunk",
            created: 0,
            model: "m1",
            choices: [{ index: 0, delta: { content: STREAM_WORDS[i] }, finish_reason: null }],
          };
          res.write(`data: ${JSON.stringify(chunk)}\n\n`);
        }
        finished = true;
        res.end("data: [DONE]\n\n");
        return;
      }
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          id: "c1",
          object: "chat.completion",
          created: 0,
          model: parsed.model ?? "m1",
          choices: [{ index: 0, message: { role: "assistant", content: "hello" }, finish_reason: "stop" }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const abortedPromise = new Promise<void>((resolve) => {
    onAbort = resolve;
  });
  return {
    url,
    baseUrl: `${url}/v1`,
    received,
    reject,
    release() {
      const w = waiters.shift();
      if (w) w();
      else releases++;
    },
    aborted: () => abortedPromise,
    close: () =>
      new Promise<void>((resolve) => {
        for (const w of waiters) w();
        waiters = [];
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
