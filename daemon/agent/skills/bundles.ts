import { mkdirSync } from "node:fs";
import { readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { Document, isMap, parseDocument } from "yaml";
import { z } from "zod";
import { AgentError } from "../../../shared/errors.js";
import type { Logger } from "../../log/logger.js";
import { writeFileAtomic } from "../../store/atomic-file.js";
import { slugify } from "../../skill-files/skill-file.js";
import type { BundleInfo } from "../../../shared/protocol/skills.js";
import { watchFolder, type FolderWatch } from "./watch.js";

/** `$AGENT_HOME/skill-bundles/<slug>.yaml`: several skills loaded together by `/<slug>` (the shape the socket carries). */
export type Bundle = BundleInfo;

const SLUG = /^[a-z0-9][a-z0-9_-]{0,63}$/;

const bundleSchema = z.object({
  name: z.string().trim().min(1).max(200),
  description: z.string().max(2000).nullish(),
  skills: z.array(z.string().trim().min(1).max(200)).min(1).max(100),
  instruction: z.string().max(20_000).nullish(),
});

/**
 * The home's skill bundles: read at start, cached, rescanned when the folder changes and on
 * `agent bundles reload`. A file that does not parse or lacks a field is skipped with a warning
 * (daemon log and `bundles list`), never a failure. The daemon is the only writer; files are
 * written with the `yaml` Document API, so a `--force` rewrite keeps the file's comments.
 */
export class BundleStore {
  #bundles = new Map<string, Bundle>();
  #warnings: string[] = [];
  #chain: Promise<unknown> = Promise.resolve();
  #watch: FolderWatch | null = null;

  constructor(
    readonly dir: string,
    private readonly log: Logger,
  ) {}

  async start(watch = true): Promise<void> {
    await this.reload();
    if (!watch) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      this.#watch = await watchFolder(this.dir, 0, () => void this.reload(), this.log);
    } catch (error) {
      this.log.warn("cannot watch the skill-bundles folder; `agent bundles reload` still rescans it", { dir: this.dir, error: String(error) });
    }
  }

  async stop(): Promise<void> {
    await this.#watch?.close();
    this.#watch = null;
  }

  list(): { bundles: Bundle[]; warnings: string[]; dir: string } {
    return { bundles: [...this.#bundles.values()], warnings: [...this.#warnings], dir: this.dir };
  }

  get(name: string): Bundle | null {
    return this.#bundles.get(slugify(name.replace(/^\/+/, ""))) ?? null;
  }

  /** Scan the folder again. */
  reload(): Promise<{ bundles: Bundle[]; warnings: string[]; dir: string }> {
    return this.#serialize(async () => {
      const bundles = new Map<string, Bundle>();
      const warnings: string[] = [];
      let names: string[] = [];
      try {
        names = (await readdir(this.dir)).filter((n) => n.endsWith(".yaml")).sort();
      } catch {
        names = [];
      }
      for (const name of names) {
        const file = join(this.dir, name);
        const slug = name.slice(0, -".yaml".length);
        const read = await readBundle(file, slug);
        if (read.ok) bundles.set(slug, read.bundle);
        else {
          warnings.push(`${name}: ${read.error}`);
          this.log.warn("skill bundle skipped", { file, warning: read.error });
        }
      }
      this.#bundles = bundles;
      this.#warnings = warnings;
      return this.list();
    });
  }

  /** Write `<slug>.yaml`; refuses an existing bundle unless `force`. */
  create(input: {
    name: string;
    skills: string[];
    description?: string;
    instruction?: string;
    force?: boolean;
  }): Promise<{ bundle: Bundle; replaced: boolean }> {
    return this.#serialize(async () => {
      const name = input.name.trim();
      const slug = slugify(name);
      if (!SLUG.test(slug))
        throw new AgentError(
          "bundles.invalid_name",
          `a bundle name needs letters or digits (its file is <slug>.yaml); got ${JSON.stringify(input.name.slice(0, 80))}`,
        );
      const skills = [...new Set(input.skills.map((s) => s.trim()).filter(Boolean))];
      if (!skills.length) throw new AgentError("bundles.invalid", "a bundle needs at least one skill (--skill <name>, repeatable)");
      const file = join(this.dir, `${slug}.yaml`);
      const text = await readFile(file, "utf8").catch(() => null);
      if (text !== null && !input.force) throw new AgentError("bundles.exists", `bundle "${slug}" exists (${file}); --force replaces it`);
      const checked = bundleSchema.safeParse({ name, skills, description: input.description, instruction: input.instruction });
      if (!checked.success)
        throw new AgentError(
          "bundles.invalid",
          `invalid bundle: ${checked.error.issues.map((i) => `${i.path.join(".") || "bundle"}: ${i.message}`).join("; ")}`,
        );
      // Edit the existing document when there is one, so its comments stay.
      const existing = text === null ? null : parseDocument(text);
      const doc: Document = existing && !existing.errors.length && isMap(existing.contents) ? (existing as unknown as Document) : new Document({});
      doc.set("name", name);
      doc.set("description", input.description ?? "");
      doc.set("skills", skills);
      if (input.instruction) doc.set("instruction", input.instruction);
      else doc.delete("instruction");
      mkdirSync(this.dir, { recursive: true });
      await writeFileAtomic(file, doc.toString());
      const bundle: Bundle = { slug, name, description: input.description ?? "", skills, instruction: input.instruction || null, file };
      this.#bundles.set(slug, bundle);
      this.#warnings = this.#warnings.filter((w) => !w.startsWith(`${slug}.yaml:`));
      return { bundle, replaced: text !== null };
    });
  }

  delete(name: string): Promise<{ deleted: string; file: string }> {
    return this.#serialize(async () => {
      const slug = slugify(name);
      const file = join(this.dir, `${slug}.yaml`);
      if (!SLUG.test(slug)) throw new AgentError("bundles.not_found", `no bundle "${name.slice(0, 80)}"`);
      try {
        await unlink(file);
      } catch {
        throw new AgentError("bundles.not_found", `no bundle "${slug}" (no ${file})`);
      }
      this.#bundles.delete(slug);
      this.#warnings = this.#warnings.filter((w) => !w.startsWith(`${slug}.yaml:`));
      return { deleted: slug, file };
    });
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work, work);
    this.#chain = run.catch(() => undefined);
    return run;
  }
}

async function readBundle(file: string, slug: string): Promise<{ ok: true; bundle: Bundle } | { ok: false; error: string }> {
  if (!SLUG.test(slug)) return { ok: false, error: "the file name is not a bundle slug ([a-z0-9][a-z0-9_-]*.yaml)" };
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    return { ok: false, error: `unreadable (${(error as Error).message})` };
  }
  const doc = parseDocument(text);
  if (doc.errors.length) return { ok: false, error: `not valid YAML: ${doc.errors[0]!.message.split("\n")[0]}` };
  const parsed = bundleSchema.safeParse(doc.toJS());
  if (!parsed.success) return { ok: false, error: parsed.error.issues.map((i) => `${i.path.join(".") || "the file"}: ${i.message}`).join("; ") };
  const b = parsed.data;
  return {
    ok: true,
    bundle: { slug, name: b.name, description: b.description ?? "", skills: b.skills, instruction: b.instruction?.trim() ? b.instruction : null, file },
  };
}
