import { ActorRuntimeImpl, type RuntimeOptions } from "../../daemon/actors/runtime/runtime.js";
import type { ActorDefinition } from "../../daemon/actors/types.js";
import { tempHome } from "../helpers/cli.js";

/** A runtime on a fresh temp data dir; `restart()` stops it and opens a new one on the same dir. */
export async function tempRuntime(defs: Record<string, ActorDefinition>, options: Partial<RuntimeOptions> = {}) {
  const { home: dir, cleanup } = tempHome("actors");
  const make = async () => {
    const rt = new ActorRuntimeImpl({ dataDir: dir, crash: { backoffBaseMs: 10, backoffMaxMs: 50 }, ...options });
    for (const [name, def] of Object.entries(defs)) rt.registerDefinition(name, def);
    await rt.start();
    return rt;
  };
  const h = {
    dir,
    rt: await make(),
    async restart() {
      await h.rt.stop();
      h.rt = await make();
      return h.rt;
    },
    async dispose() {
      await h.rt.stop().catch(() => undefined);
      cleanup();
    },
  };
  return h;
}

export const req = (name: string, key?: string | null, extra: Record<string, unknown> = {}) => ({
  namespace: "default",
  name,
  key,
  runner_name_selector: "default",
  crash_policy: "sleep" as const,
  ...extra,
});

export { waitFor } from "../helpers/wait.js";
