import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../../../shared/errors.js";

/** `agent actors new <name> [--workflow]`: a working example module in `$AGENT_HOME/actors/`. */
export const ACTOR_NAME_RE = /^[A-Za-z_$][A-Za-z0-9_$]{0,63}$/;

export function counterModule(name: string): string {
  return `// An actor module: every export with an \`actions\` member is an actor named after the export.
// Try it:
//   agent actors create ${name} --key demo
//   agent actors call <id> increment 5
//   agent actors state <id>
// Edit and save this file: the daemon reloads it.

export const ${name} = {
  // The initial state of each new actor (persisted before every action answers).
  createState: (c, input) => ({ count: input?.start ?? 0 }),

  actions: {
    increment: (c, by = 1) => {
      if (typeof by !== "number") {
        // An error with \`public: true\` reaches the caller as a user error with its code.
        throw Object.assign(new Error("by must be a number"), { public: true, code: "invalid_amount" });
      }
      c.state.count += by;
      c.broadcast("changed", c.state.count);
      return c.state.count;
    },
    get: (c) => c.state.count,
    reset: (c) => {
      c.log.info("reset", { was: c.state.count });
      c.state.count = 0;
      return 0;
    },
  },

  // Sleep after 30 s without calls; the next call wakes it with its state.
  options: { sleepTimeout: 30_000 },
};
`;
}

export function workflowModule(name: string): string {
  return `// A durable workflow actor: each step's result is recorded, so after a restart (or a replay
// from the inspector) the workflow resumes from its history instead of running finished steps again.
// Try it:
//   agent actors create ${name} --key demo
//   agent actors call <id> status
//   agent actors state <id>

export const ${name} = {
  state: { stage: "new", total: 0, orders: 0 },

  workflow: async (w) => {
    await w.step("prepare", async () => {
      w.state.stage = "prepared";
    });
    // A durable sleep: its wake-up time is recorded and survives a daemon restart.
    await w.sleep(100);
    await w.loop("orders", async (w) => {
      // Waits for a queue message named "order" (send one with the RivetKit client's send()).
      const message = await w.queue.next({ name: "order" });
      if (!message) return { continue: true };
      const total = await w.step("add", () => {
        w.state.total += Number(message.body?.amount ?? 0);
        w.state.orders += 1;
        return w.state.total;
      });
      await message.complete({ total });
      return { continue: true };
    });
  },

  actions: {
    status: (c) => c.state,
  },
};
`;
}

export function scaffoldActor(dir: string, name: string, workflow: boolean): { file: string; name: string } {
  if (!ACTOR_NAME_RE.test(name)) {
    throw new AgentError(
      "api.bad_request",
      `actor name ${JSON.stringify(name)} must be a JavaScript identifier (letters, digits, _ and $, not starting with a digit)`,
    );
  }
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${name}.mjs`);
  if (existsSync(file) || existsSync(join(dir, `${name}.js`))) {
    throw new AgentError("actor.module_exists", `${file} already exists; not overwriting it`, { file });
  }
  writeFileSync(file, workflow ? workflowModule(name) : counterModule(name), { flag: "wx" });
  return { file, name };
}
