/** The daemon's socket client, the one layer the CLI and the TUI share. */
export { connectDaemon, tryConnect, DaemonClient, type ConnectOptions } from "./connection.js";
export { daemonEntry, startDaemon, stopDaemonAndWait } from "./daemon-process.js";
