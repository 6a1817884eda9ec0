/**
 * The daemon's socket client, the one layer the CLI and the TUI share. Starting and stopping the
 * daemon process (`startDaemon`, `stopDaemonAndWait`, `daemonEntry`) is in ./daemon-process.js,
 * imported from there by the few commands that do it: a re-export here would load it (and
 * node:child_process) on every CLI call, which only talks to a running daemon.
 */
export { connectDaemon, tryConnect, DaemonClient, type ConnectOptions } from "./connection.js";
