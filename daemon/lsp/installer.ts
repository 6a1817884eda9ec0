import { spawn } from "node:child_process";
import { mkdirSync, existsSync } from "node:fs";
import { join } from "node:path";
import { AgentError } from "../../shared/errors.js";
import type { Logger } from "../log/logger.js";
import { writeFileAtomicSync } from "../store/atomic-file.js";

/** An npm install of language servers may take a while (pyright is large); past this it is abandoned. */
const INSTALL_TIMEOUT_MS = 10 * 60_000;

/**
 * Installs npm packages into `$AGENT_HOME/lsp/` with `npm install --prefix`, logging npm's
 * progress lines. One install runs at a time; callers asking for the same packages share it.
 */
export class Installer {
  private running: Promise<void> = Promise.resolve();
  private readonly pending = new Map<string, Promise<void>>();

  constructor(
    private readonly dir: string,
    private readonly log: Logger,
    private readonly env: () => NodeJS.ProcessEnv,
  ) {}

  /** Package sets being installed now (for `agent lsp status`). */
  get inProgress(): string[] {
    return [...this.pending.keys()];
  }

  install(packages: string[]): Promise<void> {
    const key = [...packages].sort().join(" ");
    const existing = this.pending.get(key);
    if (existing) return existing;
    const run = this.running.catch(() => undefined).then(() => this.npm(packages));
    this.running = run;
    this.pending.set(key, run);
    const forget = () => this.pending.delete(key);
    run.then(forget, forget);
    return run;
  }

  private npm(packages: string[]): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    // A package.json of its own keeps npm from walking up into an enclosing project.
    const manifest = join(this.dir, "package.json");
    if (!existsSync(manifest)) writeFileAtomicSync(manifest, JSON.stringify({ name: "agent-lsp-servers", private: true }, null, 2) + "\n");
    const args = ["install", "--prefix", this.dir, "--save-exact", "--no-audit", "--no-fund", "--loglevel", "http", ...packages];
    this.log.info("installing language servers", { packages, dir: this.dir });
    const started = Date.now();
    return new Promise((resolve, reject) => {
      const child = spawn("npm", args, { cwd: this.dir, env: this.env(), stdio: ["ignore", "pipe", "pipe"] });
      let tail = "";
      const progress = (chunk: Buffer) => {
        const text = chunk.toString("utf8");
        tail = (tail + text).slice(-4000);
        for (const line of text.split("\n")) if (line.trim()) this.log.info("install progress", { line: line.trim().slice(0, 300) });
      };
      child.stdout.on("data", progress);
      child.stderr.on("data", progress);
      const timer = setTimeout(() => child.kill("SIGKILL"), INSTALL_TIMEOUT_MS);
      child.on("error", (error) => {
        clearTimeout(timer);
        reject(new AgentError("lsp.install_failed", `cannot run npm: ${error.message}`, { packages }));
      });
      child.on("close", (code, signal) => {
        clearTimeout(timer);
        if (code === 0) {
          this.log.info("language servers installed", { packages, ms: Date.now() - started });
          resolve();
        } else {
          this.log.error("language server install failed", { packages, code, signal, output: tail });
          reject(
            new AgentError(
              "lsp.install_failed",
              `npm install ${packages.join(" ")} failed (${signal ?? `exit ${code}`}): ${tail.trim().split("\n").slice(-3).join(" | ")}`,
              { packages },
            ),
          );
        }
      });
    });
  }
}
