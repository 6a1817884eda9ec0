import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parse } from "yaml";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { gitRepo, hasStack, profileHome, writeTree } from "./helpers.js";

const h = profileHome();
test.after(() => h.dispose());

const manifest = (version: string, extra = "") =>
  `# the distribution's own comment\nname: scribe\nversion: ${version}\nauthor: Ada\nagent_requires: ">=0.1.0"\nenv_requires:\n  - name: SCRIBE_KEY\n    description: the key\n  - name: SCRIBE_OPTIONAL\n    optional: true\n  - HOME\n${extra}`;

const v1 = {
  "distribution.yaml": manifest("1.0.0"),
  "SOUL.md": "You are Scribe v1.\n",
  "config.yaml": "_config_version: 13\nagent:\n  max_turns: 11\n",
  "skills/notes/SKILL.md": "---\nname: notes\n---\nv1\n",
  "skills/old/SKILL.md": "---\nname: old\n---\n",
  "cron/jobs.yaml": "jobs:\n  - name: daily\n    schedule: '0 9 * * *'\n    enabled: true\n",
  ".env": "LEAKED=1\n",
  "memories/MEMORY.md": "not yours\n",
  "sessions/x.json": "{}\n",
  "state.db": "x",
};

const repo = join(h.userHome, "scribe-repo");
const profile = join(h.home, "profiles", "scribe");

test("install from a git repository previews the manifest and env, and -y installs it", async () => {
  gitRepo(repo, v1);
  const r = await h.cli(["profile", "install", `file://${repo}`, "-y"], { env: { SCRIBE_KEY: "" } });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /Distribution scribe 1\.0\.0 by Ada \(git:/);
  assert.match(r.stderr, /SCRIBE_KEY\s+needs setting/);
  assert.match(r.stderr, /SCRIBE_OPTIONAL\s+optional/);
  assert.match(r.stderr, /HOME\s+set/);
  assert.is(readFileSync(join(profile, "SOUL.md"), "utf8"), "You are Scribe v1.\n");
  assert.ok(existsSync(join(profile, "skills", "notes", "SKILL.md")));
});

test("the installed manifest keeps its comments and records installed_at (UTC, seconds) and the source", async () => {
  const text = readFileSync(join(profile, "distribution.yaml"), "utf8");
  assert.match(text, /# the distribution's own comment/);
  const m = parse(text);
  assert.match(m.installed_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  assert.is(m.source, `file://${repo}`);
  const list = JSON.parse((await h.cli(["profile", "list", "--json"])).stdout);
  assert.equal(list.profiles.find((p: { name: string }) => p.name === "scribe").distribution.version, "1.0.0");
  assert.match((await h.cli(["profile", "list"])).stdout, /scribe@1\.0\.0/);
});

test("user-owned files in a distribution are never copied in", async () => {
  for (const f of [".env", "memories", "sessions", "state.db", ".git"]) assert.not.ok(existsSync(join(profile, f)), f);
});

test("cron jobs are installed but disabled", async () => {
  const jobs = parse(readFileSync(join(profile, "cron", "jobs.yaml"), "utf8")).jobs;
  assert.is(jobs[0].name, "daily");
  assert.is(jobs[0].enabled, false);
});

test("installing over an existing profile needs --force", async () => {
  const r = await h.cli(["profile", "install", `file://${repo}`, "-y"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /already exists; --force/);
});

test("update replaces SOUL.md and skills and keeps memories, .env and config.yaml", async () => {
  writeTree(profile, {
    "memories/MEMORY.md": "mine\n",
    ".env": "SCRIBE_KEY=k\n",
    "config.yaml": "_config_version: 13\nagent:\n  max_turns: 42\n",
    "workspace/draft.txt": "w\n",
  });
  writeTree(repo, {
    "distribution.yaml": manifest("1.1.0"),
    "SOUL.md": "You are Scribe v2.\n",
    "skills/notes/SKILL.md": "---\nname: notes\n---\nv2\n",
    "config.yaml": "_config_version: 13\nagent:\n  max_turns: 99\n",
  });
  const { execFileSync } = await import("node:child_process");
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "rm", "-rq", "skills/old"], { cwd: repo });
  execFileSync("git", ["-c", "user.name=T", "-c", "user.email=t@example.com", "commit", "-qam", "v2"], { cwd: repo });
  const before = parse(readFileSync(join(profile, "distribution.yaml"), "utf8")).installed_at;
  const r = await h.cli(["profile", "update", "scribe", "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stderr, /1\.0\.0 → 1\.1\.0/);
  assert.is(readFileSync(join(profile, "SOUL.md"), "utf8"), "You are Scribe v2.\n");
  assert.match(readFileSync(join(profile, "skills", "notes", "SKILL.md"), "utf8"), /v2/);
  assert.not.ok(existsSync(join(profile, "skills", "old")));
  assert.is(readFileSync(join(profile, "memories", "MEMORY.md"), "utf8"), "mine\n");
  assert.is(readFileSync(join(profile, ".env"), "utf8"), "SCRIBE_KEY=k\n");
  assert.match(readFileSync(join(profile, "config.yaml"), "utf8"), /max_turns: 42/);
  assert.ok(existsSync(join(profile, "workspace", "draft.txt")));
  const m = parse(readFileSync(join(profile, "distribution.yaml"), "utf8"));
  assert.is(m.version, "1.1.0");
  assert.ok(m.installed_at >= before);
});

test("update --force-config also replaces config.yaml", async () => {
  const r = await h.cli(["profile", "update", "scribe", "--force-config", "-y"]);
  assert.is(r.code, 0, r.stderr);
  assert.match(readFileSync(join(profile, "config.yaml"), "utf8"), /max_turns: 99/);
  assert.is(readFileSync(join(profile, "memories", "MEMORY.md"), "utf8"), "mine\n");
});

test("install from a local directory, under another --name", async () => {
  const dir = join(h.userHome, "plain-dist");
  writeTree(dir, { "distribution.yaml": "name: plain\nversion: 2.0.0\n", "SOUL.md": "Plain.\n" });
  const r = await h.cli(["profile", "install", dir, "--name", "plain2", "-y", "--json"]);
  assert.is(r.code, 0, r.stderr);
  assert.is(JSON.parse(r.stdout).name, "plain2");
  assert.is(readFileSync(join(h.home, "profiles", "plain2", "SOUL.md"), "utf8"), "Plain.\n");
});

test("install without -y and without a terminal refuses and installs nothing", async () => {
  const dir = join(h.userHome, "plain-dist");
  const r = await h.cli(["profile", "install", dir]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /confirm with -y/);
  assert.not.ok(existsSync(join(h.home, "profiles", "plain")));
});

test("a distribution whose agent_requires this version fails is refused", async () => {
  for (const spec of [">=99.0.0", "<0.1.0", "==0.0.9", "!=0.1.0", "5.0"]) {
    const dir = join(h.userHome, `too-new-${spec.replace(/[^0-9a-z]/g, "")}`);
    writeTree(dir, { "distribution.yaml": `name: future\nversion: 1.0.0\nagent_requires: "${spec}"\n` });
    const r = await h.cli(["profile", "install", dir, "-y"]);
    assert.is(r.code, 1, `${spec}: ${r.stderr}`);
    assert.match(r.stderr, /requires agent .*; this is agent 0\.1\.0/);
    assert.not.ok(hasStack(r.stderr));
  }
  assert.not.ok(existsSync(join(h.home, "profiles", "future")));
});

test("agent_requires that this version meets installs", async () => {
  const dir = join(h.userHome, "ok-req");
  writeTree(dir, { "distribution.yaml": `name: okreq\nversion: 1.0.0\nagent_requires: ">=0.1, <1.0, !=0.0.5, ==0.1.0"\n` });
  const r = await h.cli(["profile", "install", dir, "-y"]);
  assert.is(r.code, 0, r.stderr);
});

test("a symlink in the distribution is refused and nothing is installed", async () => {
  const dir = join(h.userHome, "linked");
  writeTree(dir, { "distribution.yaml": "name: linked\nversion: 1.0.0\n" });
  mkdirSync(join(dir, "skills"));
  symlinkSync("/etc/passwd", join(dir, "skills", "passwd"));
  const r = await h.cli(["profile", "install", dir, "-y"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /symlink \(skills\/passwd\)/);
  assert.not.ok(hasStack(r.stderr));
  assert.not.ok(existsSync(join(h.home, "profiles", "linked")));
});

test("a manifest with a reserved, invalid or traversing name or owned path is refused", async () => {
  for (const [text, re] of [
    ["name: sudo\nversion: 1.0.0\n", /"sudo" cannot be used/],
    ["name: ../up\nversion: 1.0.0\n", /invalid distribution name/],
    ["name: ok\nversion: 1.0.0\ndistribution_owned: ['../../outside']\n", /leaves the profile folder/],
    ["name: ok\nversion: 1.0.0\ndistribution_owned: ['memories']\n", /belongs to the user/],
  ] as const) {
    const dir = join(h.userHome, `bad-${Math.random().toString(36).slice(2)}`);
    writeTree(dir, { "distribution.yaml": text });
    const r = await h.cli(["profile", "install", dir, "-y"]);
    assert.is(r.code, 1, r.stderr);
    assert.match(r.stderr, re);
    assert.not.ok(hasStack(r.stderr));
  }
});

test("a clone failure shows git's message", async () => {
  const r = await h.cli(["profile", "install", `file://${h.userHome}/no-such-repo.git`, "-y"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, /git clone .* failed: .*(does not exist|not a git repository|Could not read)/is);
  assert.not.ok(hasStack(r.stderr));
});

test("delete shows the distribution's name, version and source before asking", async () => {
  const r = await h.cli(["profile", "delete", "scribe"]);
  assert.is(r.code, 1);
  assert.match(r.stderr, new RegExp(`distribution: scribe 1\\.1\\.0 from file://${repo}`));
  writeFileSync(join(profile, "keep"), "still here");
  assert.ok(existsSync(join(profile, "keep")));
});

test.run();
