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
 * One call to the home's daemon whose answer is printed: as JSON with `--json`, else through
 * `text`; exits 0. A failure is thrown, as from `withDaemon`.
 */
export function printFromDaemon<T>(env: CliEnv, json: boolean, work: (client: DaemonClient) => Promise<T>, text: (result: T) => string): Promise<number> {
  return withDaemon(env, async (client) => {
    printResult(await work(client), json, text);
    return EXIT.ok;
  });
}
