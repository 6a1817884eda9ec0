import type { Server } from "node:http";

/**
 * Stops a listener and ends its open connections (keep-alive sockets and streams included), so
 * a stop or a restart never waits on an idle client. Resolves when the server is closed.
 */
export function closeServer(server: Server): Promise<void> {
  return new Promise<void>((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
