// A temp home whose default provider is a fake upstream (test/proxy/fake-upstream.ts), for the
// proxy and sign-in tests; the proxy is started through the CLI as a user would.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { runCli, tempHome, type CliResult } from "../helpers/cli.js";
import type { ProxyStatus } from "../../shared/protocol/proxy.js";
import { startUpstream, type FakeUpstream } from "./fake-upstream.js";

export const ENV_KEY = "sk-env-key-0123";
export const CLIENT_KEY = "client-bearer-must-not-leak";

export async function proxyHome(providerExtra = "", extraConfig = "") {
  const upstream = await startUpstream();
  const { home, cleanup } = tempHome("px");
  writeFileSync(
    join(home, "config.yaml"),
    [
      "_config_version: 13",
      "model:",
      "  provider: acme",
      "providers:",
      "  acme:",
      `    base_url: ${upstream.baseUrl}`,
      "    model: m1",
      "    api_key_env: ACME_KEY",
      ...providerExtra.split("\n").filter(Boolean),
      extraConfig,
    ].join("\n"),
  );
  writeFileSync(join(home, ".env"), `ACME_KEY=${ENV_KEY}\n`, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = { AGENT_GATEWAY_PORT: "0" };
  const cli = (args: string[]): Promise<CliResult> => runCli(args, { home, env });
  return {
    home,
    upstream,
    env,
    cli,
    /** `agent proxy start --port 0 ...`: the status it printed (the real port). */
    async startProxy(args: string[] = []): Promise<ProxyStatus> {
      const r = await cli(["proxy", "start", "--port", "0", "--json", ...args]);
      if (r.code !== 0) throw new Error(`proxy start failed (${r.code}): ${r.stderr}${r.stdout}`);
      return JSON.parse(r.stdout) as ProxyStatus;
    },
    dispose: async () => {
      await runCli(["daemon", "stop"], { home }).catch(() => undefined);
      await upstream.close();
      cleanup();
    },
  };
}

export type ProxyHome = Awaited<ReturnType<typeof proxyHome>>;
export type { FakeUpstream };
