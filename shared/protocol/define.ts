import type { z } from "zod";

/**
 * One RPC method: a zod schema for its params (validated by the daemon) and a phantom
 * result type (the daemon is trusted to return it). Clients import these types only.
 * The schema is built on first use (`params` is a memoising getter): building all of the
 * table's schemas at import time was a tenth of a daemon start's CPU, and most starts use
 * only a few methods.
 */
export interface MethodSpec<P extends z.ZodType, R> {
  readonly params: P;
  /** Never set: carries the result type. */
  readonly __result?: R;
}

/**
 * `rpc<Result>()(() => paramsSchema)`: curried so the params type is inferred. Pass the schema
 * through a function so it is built lazily; a schema passed as is (built at import) also works.
 */
export function rpc<R>() {
  return <P extends z.ZodType>(schema: P | (() => P)): MethodSpec<P, R> => {
    if (typeof schema !== "function") return { params: schema };
    let built: P | undefined;
    return {
      get params(): P {
        built ??= schema();
        return built;
      },
    };
  };
}
