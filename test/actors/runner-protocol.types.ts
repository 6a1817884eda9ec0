// Checked by `npm run typecheck`, not run: the runner protocol (daemon/actors/runner/protocol.ts)
// types each operation's request and answer, so a message with a wrong operation or payload does
// not compile. Each `@ts-expect-error` below fails the typecheck if the line it marks compiles
// (as all of them did when an operation was `op: string, p: any`).
import type { ModuleRunner } from "../../daemon/actors/runner/module-runner.js";
import type { CallMessage, FromWorker, ToWorker } from "../../daemon/actors/runner/protocol.js";

export const wellFormed: ToWorker[] = [
  { t: "call", id: 1, a: "x", op: "action", p: { name: "get", args: [], queueSize: 0 } },
  { t: "call", id: 2, a: "x", op: "conn", p: { kind: "states" } },
];

export const wrongPayload: CallMessage = {
  t: "call",
  id: 1,
  a: "x",
  op: "action",
  // @ts-expect-error an action call names its action
  p: { hook: "onWake", args: [], queueSize: 0 },
};

// @ts-expect-error no such call
export const unknownCall: CallMessage = { t: "call", id: 1, a: "x", op: "eval", p: {} };

export const fromWorker: FromWorker[] = [
  { t: "rpc", id: 1, a: "x", op: "kv.get", p: { key: "k" } },
  { t: "ev", a: "x", op: "log", p: { level: "info", msg: "hi", fields: undefined } },
  // @ts-expect-error kv.put carries a value
  { t: "rpc", id: 2, a: "x", op: "kv.put", p: { key: "k" } },
  // @ts-expect-error no such log level
  { t: "ev", a: "x", op: "log", p: { level: "loud", msg: "hi", fields: undefined } },
  // @ts-expect-error no such request
  { t: "rpc", id: 3, a: "x", op: "fs.read", p: { path: "/etc/passwd" } },
];

/** The daemon's `call` takes the payload of its operation and answers that operation's result. */
export async function callsAreTyped(runner: ModuleRunner): Promise<void> {
  const response = await runner.call("x", "request", { method: "GET", url: "http://actor/", headers: [], body: null });
  const status: number = response.status;
  void status;
  // @ts-expect-error a request call carries a request, not an action
  await runner.call("x", "request", { name: "get", args: [], queueSize: 0 });
}
