/**
 * Where an actor's files live under the data directory (in its shard folder, layout.ts:
 * `<id>.json` and its temp, backup and step-journal files, `<id>.kv/`, `<id>.traces`), opening
 * its actor file, and removing them all.
 */
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { noteChanged, tempFileOf } from "../../store/atomic-file.js";
import { DocStore } from "../../store/doc-store.js";
import { ACTOR_FILE_KIND, ACTOR_FILE_VERSION, initialActorFile, NEW_ACTOR, type ActorFile } from "./actor-file.js";
import { BucketedKv } from "./kv.js";
import type { FileJournal } from "./file-journal.js";
import { batchFileWriter } from "./batch-writer.js";
import type { ActorRecord } from "../types.js";
import { ensureShardDir, shardDir } from "./layout.js";

export function actorFilePath(dataDir: string, actorId: string): string {
  return join(shardDir(dataDir, actorId), `${actorId}.json`);
}

export function actorKvDir(dataDir: string, actorId: string): string {
  return join(shardDir(dataDir, actorId), `${actorId}.kv`);
}

export function actorTraceFile(dataDir: string, actorId: string): string {
  return join(shardDir(dataDir, actorId), `${actorId}.traces`);
}

/**
 * Open (or create, with `input`) the actor file of `rec`: its newest contents are in the journal
 * of small files when they were not folded into the file yet. A new actor's file (`created`) and
 * a journaled one are not read from disk.
 */
export async function openActorFile(
  dataDir: string,
  files: FileJournal,
  rec: ActorRecord,
  input: string | null,
  created = false,
): Promise<DocStore<ActorFile>> {
  await files.ready();
  // Its step journal, KV store and copies are written next to it from now on.
  ensureShardDir(dataDir, rec.actor_id);
  const name = `${rec.actor_id}.json`;
  const journaled = files.has(name);
  const options = {
    file: actorFilePath(dataDir, rec.actor_id),
    kind: ACTOR_FILE_KIND,
    version: ACTOR_FILE_VERSION,
    initial: () => initialActorFile(rec, input),
  };
  const doc = created || journaled ? DocStore.withoutRead<ActorFile>(options) : await DocStore.open<ActorFile>(options);
  if (created) (doc.data as ActorFile & { [NEW_ACTOR]?: true })[NEW_ACTOR] = true;
  if (journaled) {
    const text = files.read(name);
    const env = text === null ? null : (JSON.parse(text) as { kind?: string; data?: ActorFile });
    if (env?.kind === ACTOR_FILE_KIND && env.data) doc.data = env.data;
  }
  return doc;
}

/** The contents of a new actor file (written through the journal of small files). */
export function actorFileText(data: ActorFile): string {
  return JSON.stringify({ kind: ACTOR_FILE_KIND, schemaVersion: ACTOR_FILE_VERSION, data });
}

/** Remove every file of a destroyed actor. */
export async function removeActorFiles(dataDir: string, files: FileJournal, actorId: string): Promise<void> {
  await files.forget(`${actorId}.json`);
  await files.forget(`${actorId}.traces`);
  const file = actorFilePath(dataDir, actorId);
  // A fold of the journal may be writing them in the writer thread: removed after it.
  await batchFileWriter.settled(file);
  await batchFileWriter.settled(actorTraceFile(dataDir, actorId));
  await rm(file, { force: true });
  await rm(`${file}.bak`, { force: true });
  await rm(tempFileOf(file), { force: true });
  await rm(`${file}.wal`, { force: true }); // step journal (step-journal.ts)
  await BucketedKv.remove(actorKvDir(dataDir, actorId));
  await rm(actorTraceFile(dataDir, actorId), { force: true });
  await rm(tempFileOf(actorTraceFile(dataDir, actorId)), { force: true });
  // A backup staging the home meanwhile drops them from its copy (store/atomic-file.ts, ChangeWatch).
  for (const p of [file, `${file}.bak`, `${file}.wal`, actorKvDir(dataDir, actorId), actorTraceFile(dataDir, actorId)]) noteChanged(p);
}
