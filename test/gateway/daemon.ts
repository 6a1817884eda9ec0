/** A real daemon on a temp AGENT_HOME with test actor modules and the gateway on a free port. */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { killQuietly, launchDaemon, runCli, tempHome, waitFor } from "../helpers/cli.js";

export const TEST_ACTORS = `
export const counter = {
  createState: (c, input) => ({ count: typeof input?.start === "number" ? input.start : 0, input: input ?? null }),
  actions: {
    increment: (c, n = 1) => (c.state.count += n),
    get: (c) => c.state.count,
    input: (c) => c.state.input,
    echo: (c, ...args) => args,
    key: (c) => c.key,
    nothing: () => undefined,
    fail: () => {
      throw Object.assign(new Error("it failed"), { public: true, code: "bad_thing", metadata: { why: "because", n: 3 } });
    },
    crash: () => {
      throw new Error("secret detail");
    },
    kvPut: async (c, key, value) => {
      await c.kv.put(key, value);
      return true;
    },
  },
  onRequest: async (c, request) => {
    if (new URL(request.url).pathname === "/stream") {
      let i = 0;
      const stream = new ReadableStream({
        async pull(controller) {
          await new Promise((r) => setTimeout(r, 20));
          if (i === 3) return controller.close();
          controller.enqueue(new TextEncoder().encode("data: " + i++ + "\\n\\n"));
        },
      });
      return new Response(stream, { headers: { "content-type": "text/event-stream" } });
    }
    const body = request.method === "GET" || request.method === "HEAD" ? "" : await request.text();
    return new Response(JSON.stringify({ url: request.url, method: request.method, body, header: request.headers.get("x-test") }), {
      status: 201,
      headers: { "content-type": "application/json", "x-from-actor": "yes" },
    });
  },
};

export const worker = {
  state: { done: 0 },
  actions: { done: (c) => c.state.done },
  run: async (c) => {
    for await (const m of c.queue.iter()) {
      c.state.done++;
      await m.complete({ got: m.body, name: m.name });
    }
  },
};

export const plain = {
  state: {},
  actions: { hi: () => "hi" },
};
`;

export interface TestDaemon {
  home: string;
  url: string;
  pid: number;
  env: NodeJS.ProcessEnv;
  stop: () => Promise<void>;
  dispose: () => Promise<void>;
}

export async function startDaemon(options: { env?: NodeJS.ProcessEnv; config?: string; home?: string; actors?: string } = {}): Promise<TestDaemon> {
  const fresh = options.home ? null : tempHome("gw");
  const home = options.home ?? fresh!.home;
  if (!options.home) {
    mkdirSync(join(home, "actors"), { recursive: true });
    writeFileSync(join(home, "actors", "test.mjs"), options.actors ?? TEST_ACTORS);
    if (options.config) writeFileSync(join(home, "config.yaml"), options.config);
  }
  const env = { AGENT_GATEWAY_PORT: "0", ...options.env };
  const info = await launchDaemon(home, env);
  const stop = async () => {
    await runCli(["daemon", "stop"], { home, env }).catch(() => undefined);
    killQuietly(info.pid);
  };
  const d: TestDaemon = {
    home,
    url: info.url,
    pid: info.pid,
    env,
    stop,
    dispose: async () => {
      await stop();
      fresh?.cleanup();
    },
  };
  await waitForActors(d.url, ["counter"]);
  return d;
}

/** User modules load asynchronously; wait until /metadata lists them. */
export async function waitForActors(url: string, names: string[], timeoutMs = 10_000): Promise<void> {
  await waitFor(
    `actors ${names.join(", ")} to be listed by /metadata`,
    async () => {
      const m = (await (await fetch(`${url}/metadata`)).json()) as { actorNames?: Record<string, unknown> };
      return names.every((n) => m.actorNames && n in m.actorNames);
    },
    timeoutMs,
  );
}

export async function putActor(url: string, body: Record<string, unknown>, query = ""): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}/actors${query}`, {
    method: "PUT",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ runner_name_selector: "default", crash_policy: "sleep", ...body }),
  });
  return { status: r.status, json: await r.json() };
}

export async function call(url: string, id: string, action: string, args: unknown[] = []): Promise<{ status: number; json: any }> {
  const r = await fetch(`${url}/gateway/${id}/action/${action}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ args }),
  });
  return { status: r.status, json: await r.json() };
}
