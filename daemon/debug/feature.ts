import { join } from "node:path";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { DaemonContext, Feature } from "../context.js";

/**
 * Diagnostics (`agent debug share`, docs/debug-and-update.md): the `debug.share` method writes
 * one redacted bundle of what the other features report about themselves (through their RPC
 * methods) and, asked to, uploads it to `debug.share_url`. Its module is loaded on first use.
 */
export function debugFeature(): Feature {
  return {
    name: "debug",
    needs: { serve: ["profiles"] },
    async start(ctx: DaemonContext) {
      ctx.rpc.register({
        "debug.share": async ({ upload }) => {
          const { buildBundle, bundleRedactor, mcpServerSecrets, secretValuesOf, uploadBundle, writeBundle } = await import("./debug-bundle.js");
          const profiles = ctx.services.get("profiles").names();
          const profilesApi = ctx.services.get("profiles");
          // What the log redactor knows, and every value under a secret-named key of each profile's config.
          // And every value of an MCP server's env and headers, whatever its name.
          const configs = [ctx.config.current(), ...profiles.map((p) => profilesApi.loadedConfig(p).current())];
          const knownSecrets = [...ctx.logSink.redactor.values(), ...configs.flatMap((c) => [...secretValuesOf(c), ...mcpServerSecrets(c.mcp_servers)])];
          const { bundle, problems } = await buildBundle({
            home: ctx.home,
            logsDir: ctx.paths.logs,
            profiles,
            knownSecrets,
            invoke: (method, params, profile) => ctx.rpc.invoke(method, params, { profile }),
            now: () => Date.now(),
          });
          const written = await writeBundle(join(ctx.home, "debug"), bundle, bundleRedactor({ home: ctx.home, profiles, knownSecrets }), Date.now());
          ctx.log.info("debug bundle written", { path: written.path, bytes: Buffer.byteLength(written.text), problems: problems.length });
          let uploadedUrl: string | null = null;
          if (upload) {
            try {
              uploadedUrl = await uploadBundle(ctx.config.current().debug.share_url, written.text);
            } catch (error) {
              const e = toAgentError(error);
              throw new AgentError(e.code, `${e.message}; the bundle is at ${written.path}`, { ...e.metadata, path: written.path });
            }
            ctx.log.info("debug bundle uploaded", { path: written.path });
          }
          return {
            path: written.path,
            bytes: Buffer.byteLength(written.text),
            sections: Object.keys(bundle).filter((k) => !["kind", "format", "created_at"].includes(k)),
            problems,
            uploaded_url: uploadedUrl,
          };
        },
      });
    },
  };
}
