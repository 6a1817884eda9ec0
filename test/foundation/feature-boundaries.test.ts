/**
 * Feature boundaries (issue 34 §2): the service registry holds interfaces its features declare,
 * a missing service is a clear error, and the features' declared needs are checked against
 * their start order before the daemon starts any of them.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentError } from "../../shared/errors.js";
import { isRegisteredCode } from "../../shared/error-codes.js";
import { checkNeeds, ServiceRegistry } from "../../daemon/context.js";
import { FEATURES } from "../../daemon/features.js";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/** Every relative import (type-only ones too) of a .ts file, as repository paths. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), "utf8");
  const out: string[] = [];
  for (const m of text.matchAll(/(?:^|\n)\s*(?:import|export)\b[^;]*?\bfrom\s+"(\.[^"]+)"/g)) {
    out.push(relative(ROOT, resolve(dirname(join(ROOT, file)), m[1]!.replace(/\.js$/, ".ts"))));
  }
  return out;
}

/** The files `start` reaches through its imports. */
function reach(start: string): Set<string> {
  const seen = new Set<string>();
  const todo = [...importsOf(start)];
  while (todo.length) {
    const f = todo.pop()!;
    if (seen.has(f)) continue;
    seen.add(f);
    try {
      todo.push(...importsOf(f));
    } catch {}
  }
  return seen;
}

test("daemon/context.ts reaches no feature's service class, so nothing imports back into it", () => {
  const reached = reach("daemon/context.ts");
  assert.not.ok(reached.has("daemon/context.ts"), "daemon/context.ts imports itself through a cycle");
  for (const f of ["daemon/agent/chat-service.ts", "daemon/kanban/kanban-service.ts", "daemon/cron/cron-service.ts", "daemon/approvals/approval-service.ts"]) {
    assert.not.ok(reached.has(f), `daemon/context.ts reaches ${f}`);
  }
});

test("a feature uses another feature's service through its declared interface, never its class", () => {
  const offenders: string[] = [];
  for (const [owner, file] of [
    ["daemon/agent/", "daemon/cron/job-run.ts"],
    ["daemon/agent/", "daemon/cron/cron-service.ts"],
    ["daemon/approvals/", "daemon/agent/session-turn.ts"],
    ["daemon/approvals/", "daemon/agent/chat-service.ts"],
  ] as const) {
    for (const i of importsOf(file)) if (i.startsWith(owner) && !i.endsWith("/api.ts")) offenders.push(`${file} → ${i}`);
  }
  assert.equal(offenders, []);
});

/** Every .ts file under a folder of the repository. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const p = `${dir}/${e.name}`;
    if (e.isDirectory()) out.push(...filesUnder(p));
    else if (e.name.endsWith(".ts")) out.push(p);
  }
  return out;
}

/** Known crossings still to be moved (issue 34): profiles counts a profile's skills with the agent's scanner. */
const KNOWN = new Set(["daemon/profiles/profile-service.ts → daemon/agent/skills/catalog.ts"]);

test("no feature imports the agent's or the gateway's internals: models and HTTP helpers are shared, backup is its own", () => {
  const offenders: string[] = [];
  for (const dir of [
    "daemon/kanban",
    "daemon/cron",
    "daemon/profiles",
    "daemon/config",
    "daemon/approvals",
    "daemon/backup",
    "daemon/lsp",
    "daemon/api-server",
  ]) {
    for (const f of filesUnder(dir)) {
      for (const i of importsOf(f)) {
        if (i.startsWith("daemon/agent/") && !i.endsWith("/api.ts") && !KNOWN.has(`${f} → ${i}`)) offenders.push(`${f} → ${i}`);
        if (i.startsWith("daemon/gateway/")) offenders.push(`${f} → ${i}`);
      }
    }
  }
  for (const f of filesUnder("daemon/agent")) for (const i of importsOf(f)) if (i.startsWith("daemon/backup/")) offenders.push(`${f} → ${i}`);
  assert.equal(offenders, []);
});

test("get() of a service no feature provides is a clear AgentError", () => {
  const services = new ServiceRegistry();
  try {
    services.get("kanban");
    assert.unreachable("get must throw");
  } catch (error) {
    assert.instance(error, AgentError);
    assert.is((error as AgentError).code, "daemon.service_unavailable");
    assert.match((error as AgentError).message, /kanban service is not running/);
    assert.ok(isRegisteredCode("daemon.service_unavailable"));
  }
  services.provide("cron", { jobsOf: async () => [], dropProfile: async () => [] });
  assert.throws(
    () => services.provide("cron", { jobsOf: async () => [], dropProfile: async () => [] }),
    (e: AgentError) => e.code === "daemon.feature_order",
  );
});

test("the daemon's features fit together: every need provided, start needs by an earlier feature", async () => {
  const features = await Promise.all(FEATURES.map((load) => load()));
  checkNeeds(features);
  const names = features.map((f) => f.name);
  // No turn can run before approvals (the agent's turns and cron's runs ask it).
  assert.ok(names.indexOf("approvals") < names.indexOf("agent"), names.join(","));
  assert.ok(names.indexOf("approvals") < names.indexOf("cron"), names.join(","));
  assert.ok(names.includes("backup"), "backup is a feature of its own");
  // Every service of the registry is provided by exactly one feature (config by main.ts).
  const provided = features.flatMap((f) => f.provides ?? []);
  assert.equal(new Set(provided).size, provided.length, provided.join(","));
  for (const s of ["actors", "chat", "profiles", "lsp", "httpPlugins", "kanban", "cron", "approvals"]) assert.ok(provided.includes(s as never), s);
});

test("checkNeeds refuses a start need provided later and a need nobody provides, naming each", () => {
  const early = { name: "early", needs: { start: ["chat" as const] } };
  const late = { name: "late", provides: ["chat" as const], needs: { serve: ["kanban" as const] } };
  try {
    checkNeeds([early, late]);
    assert.unreachable("must throw");
  } catch (error) {
    const e = error as AgentError;
    assert.is(e.code, "daemon.feature_order");
    assert.match(e.message, /early needs chat at start, but it starts later/);
    assert.match(e.message, /late needs kanban, but no feature provides it/);
  }
  // Reordered, with kanban provided, it fits.
  checkNeeds([late, early, { name: "k", provides: ["kanban"] }]);
});

test.run();
