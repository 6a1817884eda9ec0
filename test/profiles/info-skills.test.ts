import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { profileHome, writeTree } from "./helpers.js";

/** `agent profile info` tells the skills that load from the SKILL.md files the chat skips, with why. */
test("profile info shows a skill that failed to load as failed, with the reason", async () => {
  const h = profileHome();
  try {
    assert.is((await h.cli(["profile", "create", "coder"])).code, 0);
    writeTree(join(h.home, "profiles", "coder", "skills"), {
      "review/SKILL.md": "---\nname: review\ndescription: reviews code\n---\nLook closely.\n",
      "broken/SKILL.md": "---\nname: [oops\n---\nbody\n",
      "nodesc/SKILL.md": "---\nname: nodesc\n---\nbody\n",
    });
    const info = await h.cli(["profile", "info", "coder"]);
    assert.is(info.code, 0, info.stderr);
    assert.match(info.stdout, /skills:\s+review\n/, "only the skill that loads is listed as a skill");
    assert.match(info.stdout, /FAILED skill: broken\/SKILL\.md: the front matter is not valid YAML/);
    assert.match(info.stdout, /FAILED skill: nodesc\/SKILL\.md: the front matter needs a description:/);
    const json = JSON.parse((await h.cli(["profile", "info", "coder", "--json"])).stdout);
    assert.equal(json.skills, ["review"]);
    assert.equal(
      json.failed_skills.map((f: { path: string }) => f.path),
      ["broken/SKILL.md", "nodesc/SKILL.md"],
    );
  } finally {
    await h.dispose();
  }
});

test.run();
