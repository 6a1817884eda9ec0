/**
 * video_generate and x_search against local fakes of their vendors (which record what they got):
 * every validation rule sends nothing, the queue families are routed by modality (kling reads
 * start_image_url), jobs are polled to a downloaded file or cancelled upstream on interrupt, a 429
 * fails at once with the vendor's words, citations are parsed, OAuth wins over a key, and neither
 * tool is offered without a credential.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { CONFIG_DEFAULTS, type AgentConfig } from "../../shared/config/defaults.js";
import { videoGenerateTool } from "../../daemon/agent/tools/video/video-generate-tool.js";
import { xSearchTool } from "../../daemon/agent/tools/x-search-tool.js";
import { DefaultToolRegistry } from "../../daemon/agent/tools/registry.js";
import { startFakeVendors, VIDEO_BYTES } from "../fixtures/fake-vendors.js";
import { PNG_1X1 } from "../agent/helpers.js";

type Vendors = Awaited<ReturnType<typeof startFakeVendors>>;

function configWith(v: Vendors, video: Partial<AgentConfig["video_gen"]> = {}, x: Partial<AgentConfig["x_search"]> = {}): AgentConfig {
  return {
    ...CONFIG_DEFAULTS,
    video_gen: { ...CONFIG_DEFAULTS.video_gen, base_url: v.baseUrl, ...video },
    x_search: { ...CONFIG_DEFAULTS.x_search, base_url: v.baseUrl, retries: 2, ...x },
  } as AgentConfig;
}

function workspace(): string {
  const dir = mkdtempSync(join(tmpdir(), "vendor-tools-"));
  mkdirSync(join(dir, "pics"));
  writeFileSync(join(dir, "pics", "cat.png"), PNG_1X1);
  return dir;
}

function registry(config: AgentConfig, extra: { oauthToken?: () => Promise<string | undefined>; signedIn?: () => boolean } = {}) {
  const deps = { config: () => config, ...extra };
  return new DefaultToolRegistry([videoGenerateTool(deps), xSearchTool(deps)]);
}

const ENV = { VIDEO_GEN_API_KEY: "vid-key", X_SEARCH_API_KEY: "x-key" };

async function call(
  reg: DefaultToolRegistry,
  name: string,
  args: unknown,
  cwd: string,
  opts: { signal?: AbortSignal; progress?: string[]; env?: NodeJS.ProcessEnv } = {},
) {
  return reg.execute(name, args, {
    cwd,
    sessionId: "s1",
    env: opts.env ?? ENV,
    signal: opts.signal ?? new AbortController().signal,
    progress: (t) => opts.progress?.push(t),
  });
}

test("validation: each rule fails before any network call, naming what is allowed", async () => {
  const v = await startFakeVendors();
  const cwd = workspace();
  try {
    const queue = registry(configWith(v));
    const endpoint = registry(configWith(v, { provider: "endpoint" }));
    const cases: Array<[DefaultToolRegistry, unknown, RegExp, string]> = [
      [queue, { prompt: "a cat", model: "pixverse-v6/image-to-video" }, /give image_url/, "missing_image_url"],
      [
        queue,
        { prompt: "a cat", model: "sora-9" },
        /families are veo3\.1, pixverse-v6, ltx-2\.3, seedance-2\.0, kling-v3-4k, happy-horse/,
        "invalid_arguments",
      ],
      [
        endpoint,
        { prompt: "a cat", reference_image_urls: Array.from({ length: 8 }, (_, i) => `https://img/${i}.png`) },
        /at most 7 reference images/,
        "invalid_arguments",
      ],
      [endpoint, { prompt: "a cat", image_url: "https://img/a.png", reference_image_urls: ["https://img/b.png"] }, /cannot be combined/, "invalid_arguments"],
      [endpoint, { prompt: "a cat", aspect_ratio: "21:9" }, /16:9, 1:1, 2:3, 3:2, 3:4, 4:3, 9:16/, "invalid_arguments"],
      [endpoint, { prompt: "a cat", resolution: "4k" }, /480p, 720p/, "invalid_arguments"],
      [queue, { prompt: "a cat", image_url: "/etc/hostname" }, /outside the workspace/, "outside_workspace"],
      [queue, { prompt: "a cat", image_url: "../../../etc/passwd" }, /outside the workspace|not found/, ""],
    ];
    for (const [reg, args, message, code] of cases) {
      const r = await call(reg, "video_generate", args, cwd);
      assert.not.ok(r.ok, JSON.stringify(args));
      const out = r.output as { error: string; code: string };
      assert.match(out.error, message);
      if (code) assert.is(out.code, code);
    }
    assert.is(v.requests.length, 0, "the fake saw nothing");
  } finally {
    await v.close();
  }
});

test("queue: families routed by modality (kling's start_image_url), polled with progress, downloaded into the workspace", async () => {
  const v = await startFakeVendors({ pollsUntilDone: 2 });
  const cwd = workspace();
  try {
    const reg = registry(configWith(v));
    const progress: string[] = [];
    const r = await call(reg, "video_generate", { prompt: "a red fox in snow", duration: 5, audio: true }, cwd, { progress });
    assert.ok(r.ok, JSON.stringify(r.output));
    const submit = v.requests.find((q) => q.method === "POST")!;
    assert.is(submit.path, "/pixverse-v6/text-to-video", "the default family, text-to-video");
    assert.is(submit.headers.authorization, "Key vid-key");
    assert.equal(submit.body, { prompt: "a red fox in snow", duration: 5, generate_audio: true });
    const text = JSON.parse((r.output as { content: Array<{ text: string }> }).content[0]!.text);
    assert.is(text.success, true);
    assert.is(text.modality, "text");
    assert.is(text.model, "pixverse-v6/text-to-video");
    assert.is(text.size_bytes, VIDEO_BYTES.length);
    assert.ok(text.path.startsWith("videos/") && text.path.endsWith(".mp4"), text.path);
    assert.equal(readFileSync(join(cwd, text.path)), VIDEO_BYTES);
    assert.ok(existsSync(join(cwd, text.poster)), "the poster frame is saved and shown");
    assert.ok(progress.some((p) => /IN_QUEUE/.test(p)) && progress.some((p) => /downloading/.test(p)), progress.join(" | "));

    v.requests.length = 0;
    const img = await call(reg, "video_generate", { prompt: "make it move", image_url: "pics/cat.png", model: "kling-v3-4k" }, cwd);
    assert.ok(img.ok, JSON.stringify(img.output));
    const k = v.requests.find((q) => q.method === "POST")!;
    assert.is(k.path, "/kling-v3-4k/image-to-video");
    assert.ok(String(k.body.start_image_url).startsWith("data:image/png;base64,"), "a workspace file is sent inline under kling's key");
    assert.is(k.body.image_url, undefined);

    v.requests.length = 0;
    const veo = await call(reg, "video_generate", { prompt: "waves", image_url: "https://img/wave.png", model: "veo3.1" }, cwd);
    assert.ok(veo.ok);
    assert.is(v.requests.find((q) => q.method === "POST")!.body.image_url, "https://img/wave.png");
    assert.is(JSON.parse((veo.output as { content: Array<{ text: string }> }).content[0]!.text).modality, "image");
  } finally {
    await v.close();
  }
});

test("endpoint: one endpoint for both modalities, duration clamped to 1–15 s", async () => {
  const v = await startFakeVendors({ pollsUntilDone: 1, noPoster: true });
  const cwd = workspace();
  try {
    const reg = registry(configWith(v, { provider: "endpoint" }));
    const r = await call(reg, "video_generate", { prompt: "a city at night", duration: 40, aspect_ratio: "9:16", resolution: "720p" }, cwd);
    assert.ok(r.ok, JSON.stringify(r.output));
    const sent = v.requests.find((q) => q.method === "POST")!;
    assert.is(sent.path, "/videos/generations");
    assert.is(sent.headers.authorization, "Bearer vid-key");
    assert.is(sent.body.duration, 15);
    assert.is((r.output as { modality: string }).modality, "text");
    const r2 = await call(reg, "video_generate", { prompt: "the cat", image_url: "pics/cat.png", duration: 0.2 }, cwd);
    assert.ok(r2.ok);
    const sent2 = v.requests.filter((q) => q.method === "POST")[1]!;
    assert.is(sent2.body.duration, 1);
    assert.ok(String(sent2.body.image_url).startsWith("data:image/png;base64,"));
    assert.is((r2.output as { modality: string }).modality, "image");
  } finally {
    await v.close();
  }
});

test("interrupting the turn cancels the job upstream", async () => {
  for (const provider of ["queue", "endpoint"] as const) {
    const v = await startFakeVendors({ pollsUntilDone: Number.POSITIVE_INFINITY });
    const cwd = workspace();
    try {
      const reg = registry(configWith(v, { provider }));
      const ac = new AbortController();
      const progress: string[] = [];
      const running = call(reg, "video_generate", { prompt: "forever" }, cwd, { signal: ac.signal, progress });
      const deadline = Date.now() + 5000;
      while (v.requests.filter((q) => q.method === "GET").length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      ac.abort(new Error("interrupted"));
      const r = await running;
      assert.not.ok(r.ok);
      const cancel = v.requests.find((q) => q.method === (provider === "queue" ? "PUT" : "DELETE"));
      assert.ok(cancel, `${provider}: the job was cancelled upstream`);
      assert.not.ok(existsSync(join(cwd, "videos")), "nothing saved");
    } finally {
      await v.close();
    }
  }
});

test("a 429 fails at once with the vendor's message, for each backend and for x_search", async () => {
  for (const [provider, prefix] of [
    ["queue", "/pixverse-v6"],
    ["endpoint", "/videos"],
  ] as const) {
    const v = await startFakeVendors({ rateLimited: [prefix] });
    try {
      const r = await call(registry(configWith(v, { provider })), "video_generate", { prompt: "x" }, workspace());
      assert.not.ok(r.ok);
      assert.is((r.output as { code: string }).code, "rate_limited");
      assert.match((r.output as { error: string }).error, /429.*slow down: 10 requests per minute/);
      assert.is(v.requests.length, 1, `${provider}: no retry`);
    } finally {
      await v.close();
    }
  }
  const v = await startFakeVendors({ rateLimited: ["/responses"] });
  try {
    const r = await call(registry(configWith(v)), "x_search", { query: "release" }, workspace());
    assert.not.ok(r.ok);
    assert.is((r.output as { code: string }).code, "rate_limited");
    assert.match((r.output as { error: string }).error, /slow down/);
    assert.is(v.requests.length, 1, "x_search: no retry on 429 (retries: 2)");
  } finally {
    await v.close();
  }
});

test("x_search: the Responses endpoint with the search tool's filters, citations parsed, OAuth preferred over the key", async () => {
  const v = await startFakeVendors();
  try {
    const r = await call(
      registry(configWith(v)),
      "x_search",
      { query: "agent release", include_handles: ["@alice", "bob"], from_date: "2026-11-01", to_date: "2026-11-27", limit: 5 },
      workspace(),
    );
    assert.ok(r.ok, JSON.stringify(r.output));
    const sent = v.requests[0]!;
    assert.is(sent.path, "/responses");
    assert.is(sent.headers.authorization, "Bearer x-key");
    assert.is(sent.body.model, CONFIG_DEFAULTS.x_search.model);
    assert.is(sent.body.input, "agent release");
    assert.equal(sent.body.tools, [{ type: "x_search", allowed_x_handles: ["alice", "bob"], from_date: "2026-11-01", to_date: "2026-11-27" }]);
    const out = r.output as { answer: string; citations: Array<{ url: string; title?: string; post_id?: string }> };
    assert.is(out.answer, "Two posts discuss the release.");
    assert.equal(out.citations, [
      { url: "https://x.com/alice/status/1850000000000000001", title: "alice on X", post_id: "1850000000000000001" },
      { url: "https://x.com/bob/status/1850000000000000002", title: "bob on X", post_id: "1850000000000000002" },
    ]);

    v.requests.length = 0;
    const oauth = registry(configWith(v), { oauthToken: async () => "oauth-access", signedIn: () => true });
    assert.ok((await call(oauth, "x_search", { query: "q" }, workspace())).ok);
    assert.is(v.requests[0]!.headers.authorization, "Bearer oauth-access", "the sign-in wins over X_SEARCH_API_KEY");
    const bad = await call(oauth, "x_search", { query: "q", include_handles: ["a"], exclude_handles: ["b"] }, workspace());
    assert.not.ok(bad.ok);
    assert.match((bad.output as { error: string }).error, /not both/);
  } finally {
    await v.close();
  }
});

test("neither tool is offered without a credential; a sign-in alone offers x_search", async () => {
  const v = await startFakeVendors();
  try {
    const names = (reg: DefaultToolRegistry, env: NodeJS.ProcessEnv) => reg.specs({ env }).map((s) => s.name);
    assert.equal(names(registry(configWith(v)), {}), []);
    assert.equal(names(registry(configWith(v)), ENV).sort(), ["video_generate", "x_search"]);
    assert.equal(names(registry(configWith(v)), { XAI_API_KEY: "k" }), ["x_search"], "the vendor's provider key serves x_search");
    assert.equal(names(registry(configWith(v)), { FAL_KEY: "k" }), ["video_generate"], "the queue vendor's own key serves video_generate");
    assert.equal(names(registry(configWith(v), { signedIn: () => true }), {}), ["x_search"]);
  } finally {
    await v.close();
  }
});

test("image_url: a symlink in the workspace that leads out of it, a file: URL, and .. are refused before any network call", async () => {
  const v = await startFakeVendors();
  const cwd = workspace();
  const outside = mkdtempSync(join(tmpdir(), "vendor-outside-"));
  try {
    writeFileSync(join(outside, "secret.png"), PNG_1X1);
    symlinkSync(join(outside, "secret.png"), join(cwd, "pics", "link.png"));
    symlinkSync(outside, join(cwd, "out"));
    const queue = registry(configWith(v));
    for (const image_url of ["pics/link.png", "out/secret.png", `file://${join(outside, "secret.png")}`, "pics/../../x.png"]) {
      const r = await call(queue, "video_generate", { prompt: "a cat", image_url }, cwd);
      assert.not.ok(r.ok, image_url);
      assert.match((r.output as { error: string }).error, /outside the workspace|not found/, image_url);
    }
    assert.is(v.requests.length, 0, "the fake saw nothing");
  } finally {
    rmSync(outside, { recursive: true, force: true });
    await v.close();
  }
});

test.run();
