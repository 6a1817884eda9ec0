import { z } from "zod";
import { rpc } from "./define.js";

/** RPC methods of the config group. */
export const configMethods = {
  "config.ping": rpc<{ ok: true }>()(z.object({}).strict()),
};
