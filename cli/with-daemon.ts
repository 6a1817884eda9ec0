import { connectDaemon, type DaemonClient } from "../shared/client/index.js";
import type { CliEnv } from "./command.js";
import { EXIT } from "./exit-codes.js";
import { printResult } from "./output.js";

/** Runs `work` on a connection to the home's daemon (started on demand), closing it after. */
export async function withDaemon(env: CliEnv, work: (client: DaemonClient) => Promise<number>): Promise<number> {
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    return await work(client);
  } finally {
    client.close();
  }
}

/**
 * What a command group's subcommands share: one RPC round on the daemon, its result printed as
 * JSON (`--json`) or through `text`, exit 0.
 */
export function printingCall(env: CliEnv, json: boolean) {
  return <T>(work: (client: DaemonClient) => Promise<T>, text: (r: T) => string): Promise<number> =>
    withDaemon(env, async (client) => {
      printResult(await work(client), json, text);
      return EXIT.ok;
    });
}
