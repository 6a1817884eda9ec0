import { z } from "zod";
import { rpc } from "./define.js";

/** RPC methods of the actors group. */
export const actorsMethods = {
  "actors.ping": rpc<{ ok: true }>()(z.object({}).strict()),
};
