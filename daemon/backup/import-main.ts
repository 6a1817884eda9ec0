/**
 * The import process: `agent import` runs this file by its path with an IPC channel (no daemon
 * may run on a home being restored, and the CLI holds no daemon code). It stages the archive,
 * reports the preview, waits for the CLI's answer, then applies or drops the staging folder.
 * A kill at any point leaves the home as it was (daemon/backup/import.ts).
 */
import type { ImportAnswer, ImportReport, ImportRequest } from "../../shared/backup-import.js";
import { toAgentError } from "../../shared/errors.js";
import { dropOwnStaging, importLimitsFromEnv, parseSize, type StagedImport, stageImport } from "./import.js";

function report(message: ImportReport): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send) return resolve();
    process.send(message, undefined, undefined, () => resolve());
  });
}

function answer(): Promise<ImportAnswer> {
  return new Promise((resolve) => process.once("message", (m: ImportAnswer) => resolve(m)));
}

async function main(): Promise<number> {
  const request = JSON.parse(process.argv[2] ?? "{}") as ImportRequest;
  let staged: StagedImport | null = null;
  let finished = false;
  let applying = false;
  const stop = () => {
    // Once applying, the renames finish (a kill between them is repaired by cleanImportLeftovers).
    if (applying) return;
    if (!staged) {
      dropOwnStaging(request.home);
      process.exit(130);
    }
    void staged.discard().finally(() => process.exit(130));
  };
  process.once("SIGINT", stop);
  process.once("SIGTERM", stop);
  // The CLI went away (killed, even with -9) before the end: nothing is restored.
  process.once("disconnect", () => {
    if (!finished) stop();
  });
  try {
    const limits = importLimitsFromEnv();
    if (request.maxBytes !== undefined) limits.maxBytes = parseSize(request.maxBytes, "--max-bytes");
    if (request.maxFiles !== undefined) limits.maxFiles = parseSize(request.maxFiles, "--max-files");
    if (request.maxFileBytes !== undefined) limits.maxFileBytes = parseSize(request.maxFileBytes, "--max-file-bytes");
    staged = await stageImport(request.archive, request.home, { force: request.force, limits });
    await report({ type: "staged", archive: staged.archive, needsConsent: staged.needsConsent, preview: staged.preview });
    if ((await answer()).type !== "apply") return 0;
    applying = true;
    const result = await staged.apply({ keepCron: request.keepCron, keepNetwork: request.keepNetwork });
    finished = true;
    await report({ type: "done", result });
    return 0;
  } catch (error) {
    finished = true;
    const e = toAgentError(error);
    await report({ type: "error", error: { ...e.toJSON(), ...(e.expected ? {} : { stack: e.stack }) } });
    return 1;
  } finally {
    await staged?.discard();
  }
}

process.exitCode = await main();
process.disconnect?.();
