import { z } from "zod";
import { rpc } from "./define.js";

/** What `agent debug share` wrote (docs/debug-and-update.md). */
export interface DebugShareResult {
  /** The bundle: one JSON file, mode 0600, under $AGENT_HOME/debug/. */
  path: string;
  bytes: number;
  /** The bundle's sections, in order. */
  sections: string[];
  /** Sections that could not be gathered, with why (the bundle holds the error instead). */
  problems: Array<{ section: string; error: string }>;
  /** The URL the share server answered with (`--upload`), else null. */
  uploaded_url: string | null;
}

export const debugMethods = {
  /** Write one redacted diagnostics bundle; with `upload`, POST it to `debug.share_url`. */
  "debug.share": rpc<DebugShareResult>()(() => z.object({ upload: z.boolean().optional() }).strict()),
};
