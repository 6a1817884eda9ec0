// `agent import` racing other writers of its target: an import waiting at its question while
// another import fills the same empty home, or while a daemon starts on it, must fail when it
// finally applies, never move that home aside and delete it. `--force` refuses to replace a
// home whose daemon started while it waited. Archive entries that are neither files nor
// folders are capped too: a tar of many folder entries is held to the file cap.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { writeArchive } from "../fixtures/archives.mjs";
import { CLI, launchDaemon, runCli, stopDaemon, tempHome } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";

const homes: { home: string; cleanup: () => void }[] = [];
const fresh = () => {
  const h = tempHome("imprace");
  homes.push(h);
  return h.home;
};
const leftovers = (home: string) => readdirSync(dirname(home)).filter((n) => n.startsWith(`.${basename(home)}.import-`));
/** A test that answers import's question on a terminal: script(1) gives it one; skipped, with why, without it. */
const noScript = missingCommand("script", ["--version"]);
const onTerminal = testUnless(noScript && `${noScript}: no terminal to ask on`);
let asking = "";
let plain = "";

test.before(async () => {
  const dir = fresh();
  // Needs consent (an actor module), so import stops at its question on a terminal.
  asking = join(dir, "asking.tar.gz");
  await writeArchive(asking, [
    { path: "actors/", type: "Directory" },
    { path: "actors/a.mjs", content: "export default { actions: {} };\n" },
    { path: "notes/", type: "Directory" },
    { path: "notes/from-asking.md", content: "asking\n" },
  ]);
  plain = join(dir, "plain.tar.gz");
  await writeArchive(plain, [
    { path: "notes/", type: "Directory" },
    { path: "notes/from-plain.md", content: "plain\n" },
  ]);
});

test.after(async () => {
  for (const h of homes) {
    await stopDaemon(h.home);
    h.cleanup();
  }
});

/** `agent import` on a terminal (script(1)), stopped at its question until `answer` is called. */
function askingImport(
  home: string,
  args: string[],
): { child: ChildProcess; asked: Promise<void>; answer: (a: string) => Promise<{ code: number | null; out: string }> } {
  const line = [process.execPath, CLI, "import", ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const child = spawn("script", ["-qec", line, "/dev/null"], { env: { ...process.env, AGENT_HOME: home, NO_COLOR: "1" }, stdio: ["pipe", "pipe", "pipe"] });
  let out = "";
  let onAsk: () => void = () => undefined;
  const asked = new Promise<void>((resolve, reject) => {
    onAsk = resolve;
    setTimeout(() => reject(new Error(`never asked: ${out}`)), 30_000).unref();
  });
  child.stdout!.on("data", (b: Buffer) => {
    out += b.toString();
    if (out.includes("[y/N]")) onAsk();
  });
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  return {
    child,
    asked,
    answer: async (a: string) => {
      child.stdin!.write(a);
      const code = await exited;
      return { code, out };
    },
  };
}

onTerminal("an import waiting at its question never replaces what another import put into the home meanwhile", async () => {
  const target = fresh();
  const first = askingImport(target, [asking]);
  await first.asked;
  const second = await runCli(["import", plain, "-y"], { home: target });
  assert.is(second.code, 0, second.stderr);
  const r = await first.answer("y\n");
  assert.is.not(r.code, 0, r.out);
  assert.match(r.out, /was filled while the archive was restored/);
  assert.ok(existsSync(join(target, "notes", "from-plain.md")), "the second import's home is gone");
  assert.not.ok(existsSync(join(target, "notes", "from-asking.md")));
  assert.equal(leftovers(target), []);
});

onTerminal("an import waiting at its question never moves aside a home a daemon started on meanwhile", async () => {
  const target = fresh();
  const first = askingImport(target, [asking]);
  await first.asked;
  const { pid } = await launchDaemon(target);
  const r = await first.answer("y\n");
  assert.is.not(r.code, 0, r.out);
  assert.ok(existsSync(join(target, "daemon.lock")), "the running daemon's home was replaced");
  assert.is(Number(readFileSync(join(target, "daemon.lock"), "utf8").split("\n")[0]), pid);
  assert.not.ok(existsSync(join(target, "actors", "a.mjs")));
  const status = await runCli(["daemon", "status", "--json"], { home: target });
  assert.is(status.code, 0, status.stderr);
  assert.equal(leftovers(target), []);
});

onTerminal("--force waiting at its question refuses to replace a home whose daemon started meanwhile", async () => {
  const target = fresh();
  const seeded = await runCli(["import", plain, "-y"], { home: target });
  assert.is(seeded.code, 0, seeded.stderr);
  const first = askingImport(target, [asking, "--force"]);
  await first.asked;
  const { pid } = await launchDaemon(target);
  const r = await first.answer("y\n");
  assert.is.not(r.code, 0, r.out);
  assert.match(r.out, /a daemon \(pid \d+\) started on .* while the archive was restored; nothing of this import was put in place/);
  assert.is(Number(readFileSync(join(target, "daemon.lock"), "utf8").split("\n")[0]), pid);
  assert.not.ok(existsSync(join(target, "actors", "a.mjs")));
  assert.equal(leftovers(target), []);
});

test("an archive of many folder entries is held to the file cap, and nothing is restored", async () => {
  const dir = fresh();
  const archive = join(dir, "folders.tar.gz");
  const entries = Array.from({ length: 2000 }, (_, i) => ({ path: `d${i}/`, type: "Directory" as const }));
  await writeArchive(archive, entries);
  const target = fresh();
  const r = await runCli(["import", archive, "-y", "--max-files", "100"], { home: target });
  assert.is(r.code, 1, r.stderr + r.stdout);
  assert.match(r.stderr, /holds more than 100 files and folders, the cap/);
  assert.match(r.stderr, /nothing was restored/);
  assert.equal(readdirSync(target), []);
  assert.equal(leftovers(target), []);
});

test("--force is not stopped by a stale daemon.lock whose pid another process now has", async () => {
  const target = fresh();
  const seeded = await runCli(["import", plain, "-y"], { home: target });
  assert.is(seeded.code, 0, seeded.stderr);
  // A live process that is not the daemon that wrote the lock (its start time differs).
  const other = spawn("sleep", ["30"], { stdio: "ignore" });
  try {
    writeFileSync(join(target, "daemon.lock"), `${other.pid}\n1\n`);
    const r = await runCli(["import", asking, "--force", "-y"], { home: target });
    assert.is(r.code, 0, r.stderr);
    assert.ok(existsSync(join(target, "actors", "a.mjs")), "the archive was put in place");
  } finally {
    other.kill("SIGKILL");
  }
});

test.run();
