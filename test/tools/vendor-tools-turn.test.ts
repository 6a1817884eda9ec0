/**
 * A turn through the CLI in which the model calls video_generate and x_search: the daemon offers
 * both (credentials in the environment), runs them against the local vendor fakes, shows the
 * video job's progress, saves the video in the session's folder and hands the results back.
 */
import { existsSync, readdirSync, rmdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, toolMessages } from "../agent/helpers.js";
import { startFakeVendors } from "../fixtures/fake-vendors.js";

test("chat -q: the model calls video_generate and x_search; the video lands in the working folder", async () => {
  const v = await startFakeVendors({ pollsUntilDone: 2 });
  const h = await chatHome(
    {
      script: [
        { toolCalls: [{ name: "video_generate", arguments: { prompt: "a paper boat on a river", duration: 4 } }] },
        { toolCalls: [{ name: "x_search", arguments: { query: "paper boats" } }] },
        { text: "Done: the video is saved and people like paper boats." },
      ],
    },
    `video_gen:\n  base_url: ${v.baseUrl}\nx_search:\n  base_url: ${v.baseUrl}\n`,
  );
  // The chat runs in this process's cwd (the repository): the video it saves there is removed after.
  let saved: string | null = null;
  try {
    const env = { VIDEO_GEN_API_KEY: "vid-key", X_SEARCH_API_KEY: "x-key" };
    const r = await h.chat(["-q", "make a video and search"], { env, timeoutMs: 60_000 });
    assert.is(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /Done: the video is saved/);
    assert.match(r.stdout + r.stderr, /… video: (IN_QUEUE|IN_PROGRESS)/, "the job's progress is shown while it waits");
    const offered = (h.fake.requests[0]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    assert.ok(offered.includes("video_generate") && offered.includes("x_search"), offered.join(","));
    const video = JSON.parse(toolMessages(h.fake, 1)[0]!.content);
    saved = video.absolute_path;
    assert.is(video.success, true);
    assert.is(video.modality, "text");
    assert.ok(existsSync(video.absolute_path), "the video is on disk");
    assert.ok(readdirSync(join(video.absolute_path, "..")).some((f) => f.endsWith(".mp4")));
    const search = JSON.parse(toolMessages(h.fake, 2)[1]!.content);
    assert.is(search.citations[0].post_id, "1850000000000000001");
    assert.is(v.requests.find((q) => q.path === "/responses")!.headers.authorization, "Bearer x-key");
  } finally {
    if (saved) {
      rmSync(saved, { force: true });
      rmSync(saved.replace(/\.mp4$/, ".jpg"), { force: true });
      try {
        rmdirSync(dirname(saved));
      } catch {
        // Not empty: other files were there before.
      }
    }
    await h.dispose();
    await v.close();
  }
});

test("without credentials the tools are not offered to the model", async () => {
  const h = await chatHome({ script: [{ text: "ok" }] });
  try {
    const r = await h.chat(["-q", "hi"], { env: { VIDEO_GEN_API_KEY: "", X_SEARCH_API_KEY: "", XAI_API_KEY: "", FAL_KEY: "" } });
    assert.is(r.code, 0, r.stderr);
    const offered = (h.fake.requests[0]!.body.tools ?? []).map((t: { function: { name: string } }) => t.function.name);
    assert.not.ok(offered.includes("video_generate") || offered.includes("x_search"), offered.join(","));
    // agent tools list says why (the daemon was started without the keys).
    const list = await h.cli(["tools", "list"]);
    assert.is(list.code, 0, list.stderr);
    assert.match(list.stdout, /video_generate\s+media\s+no: needs VIDEO_GEN_API_KEY/);
    assert.match(list.stdout, /x_search\s+search\s+no: needs X_SEARCH_API_KEY or XAI_API_KEY/);
    assert.match(list.stdout, /read_file\s+\S+\s+yes/);
    const json = await h.cli(["tools", "list", "--json"]);
    const tools = JSON.parse(json.stdout).tools as Array<{ name: string; available: boolean }>;
    assert.is(tools.find((t) => t.name === "x_search")!.available, false);
    const bad = await h.cli(["tools", "list", "--profile", "nobody"]);
    assert.is.not(bad.code, 0);
    assert.match(bad.stderr, /nobody/);
  } finally {
    await h.dispose();
  }
});

test.run();
