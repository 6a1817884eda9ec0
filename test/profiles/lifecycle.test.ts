import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { profileHome, writeTree } from "./helpers.js";

const h = profileHome();
test.after(() => h.dispose());

const list = async () => {
  const r = await h.cli(["profile", "list", "--json"]);
  assert.is(r.code, 0, r.stderr);
  return JSON.parse(r.stdout) as {
    profiles: Array<{ name: string; description: string | null; distribution: unknown; alias: string | null; active: boolean }>;
    active: string;
    current: string;
  };
};

test("create makes the folder, records the description and writes an executable alias", async () => {
  const r = await h.cli(["profile", "create", "writer", "--description", "writes prose"]);
  assert.is(r.code, 0, r.stderr);
  const dir = join(h.home, "profiles", "writer");
  assert.ok(statSync(dir).isDirectory());
  assert.match(readFileSync(join(dir, "profile.yaml"), "utf8"), /description: writes prose/);
  const alias = join(h.userHome, ".local", "bin", "writer");
  assert.is(statSync(alias).mode & 0o111, 0o111);
  assert.match(readFileSync(alias, "utf8"), /agent --profile writer "\$@"/);
});

test("list shows every profile with its description, distribution and alias", async () => {
  const l = await list();
  const writer = l.profiles.find((p) => p.name === "writer")!;
  assert.is(writer.description, "writes prose");
  assert.is(writer.distribution, null);
  assert.is(writer.alias, join(h.userHome, ".local", "bin", "writer"));
  assert.ok(l.profiles.some((p) => p.name === "default"));
  const text = await h.cli(["profile", "list"]);
  assert.match(text.stdout, /NAME\s+DESCRIPTION\s+DISTRIBUTION/);
  assert.match(text.stdout, /writer\s+writes prose\s+-/);
});

test("--no-alias skips the alias, and an unrelated file of the alias's name is left alone", async () => {
  assert.is((await h.cli(["profile", "create", "quiet", "--no-alias"])).code, 0);
  assert.not.ok(existsSync(join(h.userHome, ".local", "bin", "quiet")));
  const mine = join(h.userHome, ".local", "bin", "mytool");
  writeFileSync(mine, "#!/bin/sh\necho mine\n");
  const r = await h.cli(["profile", "create", "mytool"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /not an agent alias; left it alone/);
  assert.is(readFileSync(mine, "utf8"), "#!/bin/sh\necho mine\n");
});

test("create refuses a profile that exists", async () => {
  const r = await h.cli(["profile", "create", "writer"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /already exists/);
});

test("--clone-from copies config, .env, SOUL.md and skills but not memories or sessions", async () => {
  writeTree(join(h.home, "profiles", "writer"), {
    "config.yaml": "agent:\n  max_turns: 7\n",
    ".env": "KEY=1\n",
    "SOUL.md": "You write.\n",
    "skills/haiku/SKILL.md": "---\nname: haiku\ndescription: writes haiku\n---\n",
    "memories/MEMORY.md": "secret\n",
    "notes.txt": "n\n",
  });
  const r = await h.cli(["profile", "create", "copy", "--clone-from", "writer", "--no-alias"]);
  assert.is(r.code, 0, r.stderr);
  const dir = join(h.home, "profiles", "copy");
  for (const f of ["config.yaml", ".env", "SOUL.md", "skills/haiku/SKILL.md"]) assert.ok(existsSync(join(dir, f)), f);
  assert.not.ok(existsSync(join(dir, "memories")));
  assert.not.ok(existsSync(join(dir, "notes.txt")));
});

test("--clone-all copies everything except sessions, logs and state", async () => {
  writeTree(join(h.home, "profiles", "writer"), { "sessions/s.json": "{}", "logs/x.log": "", "state.db": "x" });
  const r = await h.cli(["profile", "create", "full", "--clone-from", "writer", "--clone-all", "--no-alias"]);
  assert.is(r.code, 0, r.stderr);
  const dir = join(h.home, "profiles", "full");
  for (const f of ["config.yaml", "SOUL.md", "memories/MEMORY.md", "notes.txt"]) assert.ok(existsSync(join(dir, f)), f);
  for (const f of ["sessions", "logs", "state.db"]) assert.not.ok(existsSync(join(dir, f)), f);
});

test("show and info describe a profile", async () => {
  const show = await h.cli(["profile", "show", "writer", "--json"]);
  assert.is(show.code, 0, show.stderr);
  const p = JSON.parse(show.stdout);
  assert.is(p.name, "writer");
  assert.is(p.has_soul, true);
  assert.equal(p.skills, ["haiku"]);
  const info = await h.cli(["profile", "info", "writer"]);
  assert.is(info.code, 0, info.stderr);
  assert.match(info.stdout, /skills:\s+haiku/);
});

test("use sets the active profile that commands run as", async () => {
  assert.is((await h.cli(["profile", "use", "writer"])).code, 0);
  assert.is(readFileSync(join(h.home, "active_profile"), "utf8").trim(), "writer");
  const l = await list();
  assert.is(l.active, "writer");
  assert.is(l.current, "writer");
  const other = JSON.parse((await h.cli(["-p", "copy", "profile", "list", "--json"])).stdout);
  assert.is(other.current, "copy");
  assert.is((await h.cli(["profile", "use", "default"])).code, 0);
  assert.is((await list()).current, "default");
});

test("rename moves the folder and the alias", async () => {
  const r = await h.cli(["profile", "rename", "writer", "author"]);
  assert.is(r.code, 0, r.stderr);
  assert.ok(existsSync(join(h.home, "profiles", "author", "SOUL.md")));
  assert.not.ok(existsSync(join(h.home, "profiles", "writer")));
  assert.not.ok(existsSync(join(h.userHome, ".local", "bin", "writer")));
  assert.match(readFileSync(join(h.userHome, ".local", "bin", "author"), "utf8"), /--profile author/);
});

test("delete without a terminal and without -y refuses and changes nothing", async () => {
  const r = await h.cli(["profile", "delete", "author"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /This deletes profile author/);
  assert.match(r.stderr, /confirm with -y/);
  assert.ok(existsSync(join(h.home, "profiles", "author")));
});

test("delete -y removes the profile and its alias", async () => {
  const r = await h.cli(["profile", "delete", "author", "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.not.ok(existsSync(join(h.home, "profiles", "author")));
  assert.not.ok(existsSync(join(h.userHome, ".local", "bin", "author")));
  assert.not.ok((await list()).profiles.some((p) => p.name === "author"));
});

test.run();
