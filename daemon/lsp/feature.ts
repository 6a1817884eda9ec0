import type { Handlers } from "../../shared/protocol/index.js";
import type { DaemonContext, Feature } from "../context.js";
import { LspManager } from "./manager.js";

/**
 * Language servers for the diagnostics of write_file and patch (README "LSP diagnostics"),
 * offered to the agent feature as the `lsp` service, and the `lsp.*` RPC group of `agent lsp`.
 */
export function lspFeature(): Feature {
  let manager: LspManager | null = null;
  return {
    name: "lsp",
    provides: ["lsp"],
    needs: { start: ["config"] },
    async start(ctx: DaemonContext) {
      const config = ctx.services.get("config");
      const lsp = new LspManager({
        lspHome: ctx.paths.lsp,
        log: ctx.logSink.logger("lsp"),
        settings: () => config.current().lsp,
        env: () => config.env(),
      });
      manager = lsp;
      ctx.services.provide("lsp", lsp);
      ctx.rpc.register(handlers(lsp));
      reportStatus(ctx);
    },
    async reload(ctx) {
      reportStatus(ctx);
    },
    async stop() {
      await manager?.close();
    },
  };
}

function reportStatus(ctx: DaemonContext): void {
  const s = ctx.config.current().lsp;
  ctx.components.set(
    "lsp",
    s.enabled ? { status: "ok", detail: `install ${s.install_strategy}, wait ${s.wait_mode} ${s.wait_timeout}s` } : { status: "disabled" },
  );
}

function handlers(lsp: LspManager): Partial<Handlers> {
  return {
    "lsp.status": () => lsp.status(),
    "lsp.list": () => ({ servers: lsp.list() }),
    "lsp.install": ({ id }) => lsp.install(id),
    "lsp.install_all": () => lsp.installAll(),
    "lsp.restart": ({ id }) => lsp.restart(id),
    "lsp.which": ({ path }) => lsp.which(path),
  };
}
