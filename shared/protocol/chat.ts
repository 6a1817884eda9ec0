import { z } from "zod";
import { rpc } from "./define.js";

/** RPC methods of the chat group. */
export const chatMethods = {
  "chat.ping": rpc<{ ok: true }>()(z.object({}).strict()),
};
