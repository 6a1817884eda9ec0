// `agent import` applies the profile-name rules of create, install and rename: an archive holding
// profiles/root or profiles/sudo (reserved), profiles/default (the home itself) or an invalid name
// is refused with a clear error, exit 1, no stack, and nothing restored.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { runCli, stopDaemon, tempHome } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "impnames-"));
test.after(() => rmSync(dir, { recursive: true, force: true }));

const profile = (name: string) => [
  { path: `profiles/${name}/`, type: "Directory" as const },
  { path: `profiles/${name}/config.yaml`, content: "_config_version: 13\n" },
];

test("an archive with reserved profiles (root, sudo) is refused and nothing is restored", async () => {
  const archive = join(dir, "reserved.tar.gz");
  await writeArchive(archive, [{ path: "profiles/", type: "Directory" }, ...profile("writer"), ...profile("root"), ...profile("sudo")]);
  const { home, cleanup } = tempHome("impn");
  try {
    const r = await runCli(["import", archive, "-y"], { home, env: { AGENT_GATEWAY_PORT: "0" } });
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, /holds profiles\/root: the profile "root" cannot be used: it is reserved/);
    assert.match(r.stderr, /nothing was restored/);
    assert.not.match(r.stderr, /\n\s+at /, "no stack trace");
    assert.equal(readdirSync(home), [], "the home is unchanged");
    const list = await runCli(["profile", "list"], { home, env: { AGENT_GATEWAY_PORT: "0" } });
    assert.is(list.code, 0, list.stderr);
    assert.not.match(list.stdout, /\broot\b|\bsudo\b|\bwriter\b/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test("profiles/default and an invalid profile name are refused too; a valid archive imports", async () => {
  for (const [name, re] of [
    ["default", /the profile "default" cannot be used: it is the home itself/],
    ["Bad", /invalid profile "Bad"/],
  ] as const) {
    const archive = join(dir, `${name}.tar.gz`);
    await writeArchive(archive, [{ path: "profiles/", type: "Directory" }, ...profile(name)]);
    const { home, cleanup } = tempHome("impn");
    try {
      const r = await runCli(["import", archive, "-y"], { home, env: { AGENT_GATEWAY_PORT: "0" } });
      assert.is(r.code, 1, r.stderr);
      assert.match(r.stderr, re);
      assert.equal(readdirSync(home), []);
    } finally {
      await stopDaemon(home);
      cleanup();
    }
  }
  const ok = join(dir, "ok.tar.gz");
  await writeArchive(ok, [{ path: "profiles/", type: "Directory" }, ...profile("writer")]);
  const { home, cleanup } = tempHome("impn");
  try {
    const r = await runCli(["import", ok, "-y"], { home, env: { AGENT_GATEWAY_PORT: "0" } });
    assert.is(r.code, 0, r.stderr);
    const list = await runCli(["profile", "list"], { home, env: { AGENT_GATEWAY_PORT: "0" } });
    assert.match(list.stdout, /\bwriter\b/);
  } finally {
    await stopDaemon(home);
    cleanup();
  }
});

test.run();
