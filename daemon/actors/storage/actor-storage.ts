/**
 * Where an actor's files live under the data directory (`<id>.json` and its temp, backup and
 * step-journal files, `<id>.kv/`, `<id>.traces`), opening its actor file, and removing them all.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { tempFileOf } from "../../store/atomic-file.js";
import { DocStore } from "../../store/doc-store.js";
import { ACTOR_FILE_KIND, ACTOR_FILE_VERSION, initialActorFile, type ActorFile } from "./actor-file.js";
import { BucketedKv } from "./kv.js";
import type { ActorRecord } from "../types.js";

export function actorFilePath(dataDir: string, actorId: string): string {
  return join(dataDir, `${actorId}.json`);
}

export function actorKvDir(dataDir: string, actorId: string): string {
  return join(dataDir, `${actorId}.kv`);
}

export function actorTraceFile(dataDir: string, actorId: string): string {
  return join(dataDir, `${actorId}.traces`);
}

/** Open (or create, with `input`) the actor file of `rec`. */
export function openActorFile(dataDir: string, rec: ActorRecord, input: string | null): Promise<DocStore<ActorFile>> {
  return DocStore.open<ActorFile>({ file: actorFilePath(dataDir, rec.actor_id), kind: ACTOR_FILE_KIND, version: ACTOR_FILE_VERSION, initial: () => initialActorFile(rec, input) });
}

/** Remove every file of a destroyed actor. */
export async function removeActorFiles(dataDir: string, actorId: string): Promise<void> {
  const file = actorFilePath(dataDir, actorId);
  await rm(file, { force: true });
  await rm(`${file}.bak`, { force: true });
  await rm(tempFileOf(file), { force: true });
  await rm(`${file}.wal`, { force: true }); // step journal (step-journal.ts)
  await BucketedKv.remove(actorKvDir(dataDir, actorId));
  await rm(actorTraceFile(dataDir, actorId), { force: true });
  await rm(tempFileOf(actorTraceFile(dataDir, actorId)), { force: true });
}
