import { z } from "zod";
import { rpc } from "./define.js";

/**
 * The coder runtime group (docs/coder-runtime.md): turns handed to an external coding-agent
 * server (`codex app-server`). The mode is the session's (the client sends it with each turn as
 * `chat.send`'s `runtime`); `coder.runtime` checks and reports it.
 */
export type CoderRuntimeMode = "coder_app_server" | "default";

export interface CoderRuntimeStatus {
  mode: CoderRuntimeMode;
  /** Whether turns go to the app-server. */
  active: boolean;
  /** Config selects it (model.vendor_runtime or model.api_mode). */
  fromConfig: boolean;
  binary: string | null;
  source: "config" | "PATH" | "tools" | null;
  version: string | null;
  /** The version `agent coder-runtime install` installs. */
  pinned: string;
  codexHome: string;
  /** The config.toml written on enable (null when nothing was written). */
  configPath: string | null;
  /** The plugins the last started app-server listed (plugin/list); null before one answered. */
  plugins: string[] | null;
  /** Managed entries left out because the user's own config.toml defines them. */
  skipped: string[];
}

export const CODER_MODES = ["on", "auto", "off", "coder_app_server"] as const;

export const coderMethods = {
  /** No mode: the state. `on`/`coder_app_server`: enable (checks the binary and the provider, writes the managed block). `auto`/`off`: the default runtime. */
  "coder.runtime": rpc<CoderRuntimeStatus>()(() =>
    z
      .object({
        mode: z.enum(CODER_MODES).optional(),
        current: z.enum(["coder_app_server", "default"]).nullable().optional(),
        provider: z.string().min(1).optional(),
      })
      .strict(),
  ),
  /** `agent coder-runtime install`: the pinned @openai/codex into $AGENT_HOME/tools with npm. */
  "coder.install": rpc<{ path: string; version: string | null; output: string }>()(() => z.object({}).strict()),
};
