import type { z } from "zod";

/**
 * One RPC method: a zod schema for its params (validated by the daemon) and a phantom
 * result type (the daemon is trusted to return it). Clients import these types only.
 */
export interface MethodSpec<P extends z.ZodType, R> {
  readonly params: P;
  /** Never set: carries the result type. */
  readonly __result?: R;
}

/** `rpc<Result>()(paramsSchema)`: curried so the params type is inferred. */
export function rpc<R>() {
  return <P extends z.ZodType>(params: P): MethodSpec<P, R> => ({ params });
}
