import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome, toolMessages, waitFor } from "../agent/helpers.js";

function writeSkill(home: string, folder: string, name: string, description: string, body: string): string {
  const dir = join(home, "skills", folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`);
  return dir;
}

function writeBundle(home: string, slug: string, text: string): void {
  mkdirSync(join(home, "skill-bundles"), { recursive: true });
  writeFileSync(join(home, "skill-bundles", `${slug}.yaml`), text);
}

const lastUser = (body: any): string => {
  const users = body.messages.filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1].content;
  return typeof c === "string" ? c : JSON.stringify(c);
};

test("/bundles lists the bundles and /<bundle> loads every skill of the bundle into one user message, skipping a missing skill with a note", async () => {
  const h = await chatHome({ script: [{ text: "reviewed" }] });
  try {
    writeSkill(h.home, "review", "Code Review", "Review a diff carefully", "REVIEW-BODY: read every line.");
    writeSkill(h.home, "ops/deploy", "deploy", "Ship a release", "DEPLOY-BODY: run make deploy.");
    writeBundle(
      h.home,
      "ship",
      "name: Ship it\ndescription: review, then ship\nskills: [code-review, deploy, not-installed]\ninstruction: BUNDLE-INSTRUCTION first review, then deploy.\n",
    );
    const r = await h.chat([], { input: "/bundles\n/ship the login fix\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /\/ship\s+code-review, deploy, not-installed\s+review, then ship/);
    assert.match(r.stdout, /loading bundle Ship it: Code Review, deploy; skipped, not installed: not-installed/);
    assert.match(r.stdout, /reviewed/);
    assert.is(h.fake.requests.length, 1);
    const message = lastUser(h.fake.requests[0]!.body);
    const order = ["BUNDLE-INSTRUCTION", "REVIEW-BODY", "DEPLOY-BODY", "not-installed", "the login fix"].map((s) => message.indexOf(s));
    assert.ok(
      order.every((i) => i >= 0),
      message,
    );
    assert.equal(
      [...order].sort((a, b) => a - b),
      order,
      `instruction, skills, note, then the user's text:\n${message}`,
    );
    assert.match(message, /not installed and were skipped: not-installed/);
  } finally {
    await h.dispose();
  }
});

test("a bundle wins over a skill of the same slug", async () => {
  const h = await chatHome({ script: [{ text: "ok" }] });
  try {
    writeSkill(h.home, "review", "Code Review", "Review a diff carefully", "REVIEW-BODY");
    writeSkill(h.home, "deploy", "deploy", "Ship a release", "SKILL-DEPLOY-BODY");
    writeBundle(h.home, "deploy", "name: deploy\ndescription: the bundle\nskills: [code-review]\n");
    const r = await h.chat([], { input: "/deploy\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /loading bundle deploy: Code Review/);
    const message = lastUser(h.fake.requests[0]!.body);
    assert.match(message, /REVIEW-BODY/);
    assert.not.match(message, /SKILL-DEPLOY-BODY/);
  } finally {
    await h.dispose();
  }
});

test("/<skill> loads the skill as a user message built by the daemon", async () => {
  const h = await chatHome({ script: [{ text: "done" }] });
  try {
    writeSkill(h.home, "review", "Code Review", "Review a diff carefully", "REVIEW-BODY: read every line.");
    const r = await h.chat([], { input: "/code-review src/app.ts\n/nosuchskill\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /loading skill Code Review/);
    assert.match(r.stdout, /unknown command \/nosuchskill/);
    assert.is(h.fake.requests.length, 1, "an unknown name sends nothing to the model");
    const message = lastUser(h.fake.requests[0]!.body);
    assert.match(message, /REVIEW-BODY: read every line\./);
    assert.match(message, /src\/app\.ts$/);
    assert.not.match(message, /^---/m, "the front matter is not part of the message");
  } finally {
    await h.dispose();
  }
});

test("agent chat -q loads a skill named by its first word, and sends an unknown /name as typed", async () => {
  const h = await chatHome({ script: [{ text: "one" }, { text: "two" }] });
  try {
    writeSkill(h.home, "review", "Code Review", "Review a diff carefully", "REVIEW-BODY");
    const r = await h.chat(["-q", "/code-review the parser"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(lastUser(h.fake.requests[0]!.body), /REVIEW-BODY[\s\S]*the parser$/);
    const plain = await h.chat(["-q", "/tmp holds what?"]);
    assert.is(plain.code, 0, plain.stderr);
    assert.is(lastUser(h.fake.requests[1]!.body), "/tmp holds what?");
  } finally {
    await h.dispose();
  }
});

test("an invalid bundle file is skipped with a warning and the other bundles still load", async () => {
  const h = await chatHome();
  try {
    writeBundle(h.home, "good", "name: Good\ndescription: fine\nskills: [a]\n");
    writeBundle(h.home, "broken", "name: [unclosed\n");
    writeBundle(h.home, "empty", "name: Empty\ndescription: no skills\n");
    const r = await h.cli(["bundles", "list", "--json"]);
    assert.is(r.code, 0, r.stderr);
    const out = JSON.parse(r.stdout);
    assert.equal(
      out.bundles.map((b: { slug: string }) => b.slug),
      ["good"],
    );
    assert.is(out.warnings.length, 2);
    assert.match(out.warnings.join("\n"), /broken\.yaml: not valid YAML/);
    assert.match(out.warnings.join("\n"), /empty\.yaml: skills:/);
    const text = await h.cli(["bundles", "list"]);
    assert.match(text.stdout, /warning: skipped broken\.yaml/);
    const log = readFileSync(join(h.home, "logs", "skills.log"), "utf8");
    assert.match(log, /skill bundle skipped.*broken\.yaml/);
    assert.is((await h.cli(["daemon", "status"])).code, 0, "the daemon keeps running");
  } finally {
    await h.dispose();
  }
});

test("bundles create refuses an existing bundle without --force; --force replaces it and keeps the file's comments", async () => {
  const h = await chatHome();
  try {
    const created = await h.cli(["bundles", "create", "Web Review", "--skill", "code-review", "--skill", "a11y", "--description", "for web work"]);
    assert.is(created.code, 0, created.stderr);
    assert.match(created.stdout, /created bundle web-review/);
    assert.match(created.stdout, /not installed.*code-review, a11y/);
    const file = join(h.home, "skill-bundles", "web-review.yaml");
    writeFileSync(file, `# kept: why this bundle exists\n${readFileSync(file, "utf8")}`);
    const again = await h.cli(["bundles", "create", "web-review", "--skill", "x"]);
    assert.is(again.code, 1);
    assert.match(again.stderr, /bundle "web-review" exists .*--force replaces it/);
    const forced = await h.cli(["bundles", "create", "web-review", "--skill", "code-review", "--instruction", "Start with the diff.", "--force"]);
    assert.is(forced.code, 0, forced.stderr);
    const text = readFileSync(file, "utf8");
    assert.match(text, /^# kept: why this bundle exists/);
    assert.match(text, /instruction: Start with the diff\./);
    const shown = JSON.parse((await h.cli(["bundles", "show", "web-review", "--json"])).stdout);
    assert.equal(shown.bundle.skills, ["code-review"]);
    const deleted = await h.cli(["bundles", "delete", "web-review"]);
    assert.is(deleted.code, 0, deleted.stderr);
    const missing = await h.cli(["bundles", "show", "web-review"]);
    assert.is(missing.code, 4);
    assert.match(missing.stderr, /no bundle "web-review"/);
    assert.not.match(missing.stderr, /\n\s+at /, "no stack trace");
  } finally {
    await h.dispose();
  }
});

test("an invalid SKILL.md is skipped with a warning in the daemon log and the other skills load", async () => {
  const h = await chatHome();
  try {
    writeSkill(h.home, "good", "good", "a fine skill", "body");
    mkdirSync(join(h.home, "skills", "bad"), { recursive: true });
    writeFileSync(join(h.home, "skills", "bad", "SKILL.md"), "---\nname: [oops\n---\nbody\n");
    mkdirSync(join(h.home, "skills", "nodesc"), { recursive: true });
    writeFileSync(join(h.home, "skills", "nodesc", "SKILL.md"), "---\nname: nodesc\n---\nbody\n");
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      const r = await client.call("skills.list", {});
      assert.equal(
        r.skills.map((s) => s.slug),
        ["good"],
      );
      assert.match(r.warnings.join("\n"), /bad\/SKILL\.md: the front matter is not valid YAML/);
      assert.match(r.warnings.join("\n"), /nodesc\/SKILL\.md: the front matter needs a description/);
    } finally {
      client.close();
    }
    const log = readFileSync(join(h.home, "logs", "skills.log"), "utf8");
    assert.match(log, /"level":"warn".*skill skipped.*bad\/SKILL\.md/);
  } finally {
    await h.dispose();
  }
});

test("the skills folder is watched: a new skill is listed without a reload", async () => {
  const h = await chatHome();
  try {
    writeSkill(h.home, "first", "first", "the first skill", "body");
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    const client = await connectDaemon({ home: h.home });
    try {
      assert.equal(
        (await client.call("skills.list", {})).skills.map((s) => s.slug),
        ["first"],
      );
      writeSkill(h.home, "tools/second", "second", "added while the daemon runs", "body");
      await waitFor(
        "the watcher to pick up the new skill",
        async () => (await client.call("skills.list", {})).skills.map((s) => s.slug).join(",") === "first,second",
        10_000,
      );
    } finally {
      client.close();
    }
  } finally {
    await h.dispose();
  }
});

test("/reload-skills rescans the skills folder and reports what it found", async () => {
  const h = await chatHome();
  try {
    writeSkill(h.home, "first", "first", "the first skill", "body");
    assert.is((await h.cli(["daemon", "start"])).code, 0);
    writeSkill(h.home, "second", "second", "added later", "body");
    const r = await h.chat([], { input: "/reload-skills\n/skills\n/exit\n" });
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /skills rescanned: 2 skills/);
    assert.match(r.stdout, /\/second\s+added later/);
  } finally {
    await h.dispose();
  }
});

test("a skill listed in the system prompt is loaded by skill_view, with the other files of its folder", async () => {
  const h = await chatHome({ script: [{ toolCalls: [{ name: "skill_view", arguments: { name: "Code Review" } }] }, { text: "followed the skill" }] });
  try {
    const dir = writeSkill(h.home, "review", "Code Review", "Review a diff carefully", "REVIEW-BODY: read every line.");
    writeFileSync(join(dir, "checklist.md"), "- tests\n");
    const r = await h.chat(["-q", "review my change"]);
    assert.is(r.code, 0, r.stderr);
    assert.match(r.stdout, /followed the skill/);
    const first = h.fake.requests[0]!.body;
    const system = first.messages[0];
    assert.is(system.role, "system");
    assert.match(system.content, /## Skills\n/);
    assert.match(system.content, /^- Code Review: Review a diff carefully$/m);
    assert.not.match(system.content, /REVIEW-BODY/, "the prompt lists the skill, not its text");
    assert.ok(first.tools.some((t: any) => t.function.name === "skill_view"));
    const [result] = toolMessages(h.fake, 1);
    const out = JSON.parse(result!.content);
    assert.match(out.content, /REVIEW-BODY: read every line\./);
    assert.equal(out.files, ["checklist.md"]);
    assert.is(out.folder, dir);
  } finally {
    await h.dispose();
  }
});

test("the skills index is bounded: long descriptions are cut and skills past the cap are counted in a note", async () => {
  const h = await chatHome({ script: [{ text: "ok" }] });
  try {
    for (let i = 0; i < 103; i++)
      writeSkill(h.home, `s${String(i).padStart(3, "0")}`, `s${String(i).padStart(3, "0")}`, `skill ${i} ${"x".repeat(300)}`, "body");
    const r = await h.chat(["-q", "hi"]);
    assert.is(r.code, 0, r.stderr);
    const system: string = h.fake.requests[0]!.body.messages[0].content;
    const lines = system.split("\n").filter((l) => /^- s\d{3}: /.test(l));
    assert.is(lines.length, 100);
    assert.ok(lines.every((l) => l.length < 200 && l.endsWith("…")));
    assert.match(system, /\(3 more skills are not listed; skill_view loads any skill by name\.\)/);
  } finally {
    await h.dispose();
  }
});

test.run();
