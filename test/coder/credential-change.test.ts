// The coder runtime hands codex the provider's credential in its environment when the app-server
// starts. An OAuth access token is replaced (refreshed, a new sign-in): the session's next turn
// gets a server started with the current token, not the one from before; an unchanged token
// keeps the same server.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CoderService } from "../../daemon/coder/coder-service.js";
import { runCoderTurn } from "../../daemon/coder/coder-turn.js";
import type { CredentialSource } from "../../daemon/models/credentials.js";
import type { ProviderConfig } from "../../daemon/models/resolve.js";
import { systemClock } from "../../shared/clock.js";
import { CONFIG_DEFAULTS, type AgentConfig } from "../../shared/config/defaults.js";

const FIXTURE = fileURLToPath(new URL("../fixtures/fake-app-server.mjs", import.meta.url));
const home = mkdtempSync(join(tmpdir(), "coder-cred-"));
const serverLog = join(home, "server.log");
process.env.FAKE_APP_SERVER_LOG = serverLog;

const config = (() => {
  const c = structuredClone(CONFIG_DEFAULTS) as any;
  c.model.api_mode = "responses";
  c.coder_runtime.command = FIXTURE;
  return c as AgentConfig;
})();

let current = "access-token-1";
const credentials: CredentialSource = { method: "oauth", token: async () => current, afterUnauthorized: async () => null };
const provider: ProviderConfig = {
  name: "fake",
  baseUrl: "http://127.0.0.1:9/v1",
  model: "m1",
  apiKey: "unused",
  apiKeyEnv: null,
  supportsImages: false,
  loopback: true,
  readTimeoutMs: 1000,
  staleTimeoutMs: 1000,
  credentials,
  maxRetries: 0,
  retryBaseMs: 1,
};
const svc = new CoderService({ home, clock: systemClock, mcpEntries: async () => ({}) });

async function turn(prompt: string): Promise<string> {
  const out = await runCoderTurn(
    { sessionId: "s1", turnId: prompt, prompt, cwd: home, signal: new AbortController().signal },
    {
      server: svc.handle("s1", { profile: "default", config, env: process.env, provider, cwd: home }),
      clock: systemClock,
      turnTimeoutMs: 20_000,
      silenceMs: 20_000,
      append: async () => undefined,
      emit: () => undefined,
      approve: async () => ({ allowed: true, by: "user", choice: "once", message: "ok" }),
      interactive: () => true,
      autoApprove: false,
    },
  );
  assert.is(out.answer, "hello from the fake");
  const line = readFileSync(serverLog, "utf8")
    .split("\n")
    .find((l) => l.includes(`"${prompt}"`));
  return line!.split(" ")[0]!;
}

test.after(async () => {
  await svc.stop();
  rmSync(home, { recursive: true, force: true });
});

test("a replaced token starts a new app-server for the next turn; an unchanged one keeps it", async () => {
  const first = await turn("text one");
  assert.is(await turn("text two"), first, "same token, same server");
  current = "access-token-2";
  const third = await turn("text three");
  assert.is.not(third, first, "the server holding the old token was replaced");
  assert.is(await turn("text four"), third);
});

test.run();
