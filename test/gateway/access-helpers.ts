/**
 * A daemon for the access tests: test actor modules, a fake model server and a `session` actor
 * created by a real `agent chat -q` turn; plus raw HTTP (node:http, so Host and Origin are
 * exactly what the test says).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { join } from "node:path";
import { chatHome } from "../agent/helpers.js";
import { TEST_ACTORS } from "./daemon.js";

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One HTTP request with exactly these headers (Host defaults to the URL's). */
export function raw(url: string, path: string, init: { method?: string; headers?: Record<string, string>; body?: string } = {}): Promise<RawResponse> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = Buffer.byteLength(init.body);
    const req = request({ host: u.hostname, port: u.port, path, method: init.method ?? "GET", headers, agent: false }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => (text += d));
      res.on("end", () => {
        let json: any;
        try {
          json = JSON.parse(text);
        } catch {}
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on("error", reject);
    req.end(init.body);
  });
}

/** A home with the test actors and a fake model, its daemon started by a real chat turn. */
export async function accessHome(options: { extraConfig?: string; env?: NodeJS.ProcessEnv; modules?: Record<string, string> } = {}) {
  const h = await chatHome({ respond: () => ({ text: "hello from the fake model" }) }, options.extraConfig ?? "");
  Object.assign(h.env, options.env ?? {});
  mkdirSync(join(h.home, "actors"), { recursive: true });
  writeFileSync(join(h.home, "actors", "test.mjs"), TEST_ACTORS);
  for (const [file, text] of Object.entries(options.modules ?? {})) writeFileSync(join(h.home, "actors", file), text);
  const turn = await h.chat(["-q", "hello", "--json"]);
  if (turn.code !== 0) throw new Error(`agent chat -q failed (${turn.code}): ${turn.stderr}${turn.stdout}`);
  const sessionId = JSON.parse(turn.stdout).session_id as string;
  const status = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout);
  const listed = await h.cli(["actors", "list", "--name", "session", "--json"]);
  const sessions = JSON.parse(listed.stdout).actors as Array<{ actor_id: string; key: string }>;
  const sessionActor = sessions.find((a) => a.key === sessionId)?.actor_id;
  if (!sessionActor) throw new Error(`no session actor for ${sessionId} in ${listed.stdout}`);
  return { ...h, url: status.gateway_url as string, status, sessionId, sessionActor };
}

/** `POST /gateway/{id}/action/{name}` as JSON. */
export function jsonAction(args: unknown[] = []): { method: string; headers: Record<string, string>; body: string } {
  return { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ args }) };
}
