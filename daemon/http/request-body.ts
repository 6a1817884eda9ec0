/** Reading a request body whole, within gateway.max_body_bytes. */
import type { IncomingMessage } from "node:http";
import { AgentError } from "../../shared/errors.js";
import { closeAfterResponse } from "./response.js";

export function readBody(req: IncomingMessage, max: number): Promise<Buffer> {
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > max) {
    return Promise.reject(tooLarge(req, max));
  }
  return new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const onData = (chunk: Buffer) => {
      if (done) return;
      size += chunk.length;
      if (size > max) {
        done = true;
        req.off("data", onData);
        reject(tooLarge(req, max));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.once("end", () => {
      if (done) return;
      done = true;
      resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    req.once("error", (error) => {
      if (done) return;
      done = true;
      reject(new AgentError("request.aborted", `request body could not be read: ${error.message}`));
    });
  });
}

/** Reads the body, then hands it to `next`. */
export async function withBody(req: IncomingMessage, max: number, next: (body: Buffer) => Promise<void> | void): Promise<void> {
  const body = await readBody(req, max);
  await next(body);
}

function tooLarge(req: IncomingMessage, max: number): AgentError {
  // Drain (and drop) what the client still sends so it can read our answer; the connection
  // is closed after the response.
  closeAfterResponse(req);
  req.resume();
  return new AgentError("request.body_too_large", `request body exceeds the limit of ${max} bytes (gateway.max_body_bytes)`, { max_bytes: max });
}
