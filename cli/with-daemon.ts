import { connectDaemon, type DaemonClient } from "../shared/client/index.js";
import type { CliEnv } from "./command.js";

/** Runs `work` on a connection to the home's daemon (started on demand), closing it after. */
export async function withDaemon(env: CliEnv, work: (client: DaemonClient) => Promise<number>): Promise<number> {
  const client = await connectDaemon({ home: env.home, autostart: true });
  try {
    return await work(client);
  } finally {
    client.close();
  }
}
