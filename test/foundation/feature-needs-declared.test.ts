// checkNeeds (daemon/context.ts) checks the features' declared needs against the start order,
// but only what is declared: a `services.get("x")` a feature's code makes without naming `x` in
// its `needs` (or `provides`) would pass that check and could fail on a running daemon with
// daemon.service_unavailable. This reads every feature's folder and holds each get() to its
// feature's declaration, so a new call cannot slip past the start-order check.
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ROOT } from "../helpers/cli.js";

const DAEMON = join(ROOT, "daemon");
/** Services the daemon provides before any feature starts (checkNeeds' preset). */
const PRESET = ["config"];

function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...filesUnder(path));
    else if (name.endsWith(".ts")) out.push(path);
  }
  return out;
}

const names = (list: string | undefined) => [...(list ?? "").matchAll(/"(\w+)"/g)].map((m) => m[1]!);

/** A feature's folder and what its feature.ts declares. */
function features(): Array<{ dir: string; file: string; declared: Set<string> }> {
  const out: Array<{ dir: string; file: string; declared: Set<string> }> = [];
  for (const file of filesUnder(DAEMON).filter((f) => f.endsWith("/feature.ts"))) {
    const text = readFileSync(file, "utf8");
    if (!/needs:|provides:/.test(text)) continue;
    const needs = /needs:\s*\{([^}]*)\}/.exec(text)?.[1];
    const provides = /provides:\s*\[([^\]]*)\]/.exec(text)?.[1];
    // daemon/actors/feature/feature.ts is the actors feature's: its folder is daemon/actors.
    const dir = relative(DAEMON, file).split("/")[0]!;
    out.push({ dir: join(DAEMON, dir), file: relative(ROOT, file), declared: new Set([...PRESET, ...names(needs), ...names(provides)]) });
  }
  return out;
}

test("the feature folders are found, with what they declare", () => {
  const found = features();
  assert.ok(found.length >= 8, `only ${found.length} features found`);
  for (const f of found) assert.ok(f.declared.size > PRESET.length, `${relative(ROOT, f.dir)} declares nothing`);
});

test("every services.get() in a feature's code names a service its feature declares (needs or provides)", () => {
  const problems: string[] = [];
  for (const { dir, file: featureFile, declared } of features()) {
    for (const file of filesUnder(dir)) {
      // A feature's api.ts declares the interface others get; its get() calls are theirs, not its own.
      if (file.endsWith("/api.ts")) continue;
      for (const m of readFileSync(file, "utf8").matchAll(/services\.get\(\s*"(\w+)"\s*\)/g)) {
        if (!declared.has(m[1]!)) problems.push(`${relative(ROOT, file)} gets "${m[1]}", which ${featureFile} does not declare`);
      }
    }
  }
  assert.equal(problems, []);
});

test.run();
