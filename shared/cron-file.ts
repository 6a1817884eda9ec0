import { Document, parseDocument } from "yaml";

/**
 * A cron file (`cron/*.yaml|yml|json` of a profile) read the one way both its readers read it:
 * the cron loader (which schedules the jobs) and the distribution installer (which disables
 * them). YAML anchors, aliases and `<<` merge keys are resolved here, so what the installer
 * turns off is exactly what the loader sees.
 */

/** The file's data; throws an Error naming the problem when it does not parse. */
export function parseCronFile(text: string, json: boolean): unknown {
  if (json) {
    try {
      return JSON.parse(text);
    } catch {
      throw new Error("not valid JSON");
    }
  }
  const doc = parseDocument(text, { merge: true });
  if (doc.errors.length) throw new Error(`not valid YAML: ${doc.errors[0]!.message}`);
  // toJS bounds how far aliases may expand (a "billion laughs" file throws instead).
  return doc.toJS({ maxAliasCount: 1000 });
}

/** The jobs a file's data declares: a `jobs` list, a list, or one job. */
export function cronFileJobs(data: unknown): unknown[] {
  if (Array.isArray(data)) return data;
  if (data && typeof data === "object") {
    const jobs = (data as { jobs?: unknown }).jobs;
    return Array.isArray(jobs) ? jobs : [data];
  }
  return [];
}

/** Data written back as plain YAML or JSON: no anchors, aliases or merge keys, each object spelled out. */
export function formatCronFile(data: unknown, json: boolean): string {
  if (json) return `${JSON.stringify(data, null, 2)}\n`;
  return new Document(data, { aliasDuplicateObjects: false }).toString();
}
