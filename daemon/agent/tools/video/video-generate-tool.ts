/**
 * `video_generate`: a video from a prompt (text-to-video) or from an image (`image_url`:
 * image-to-video), made by the configured backend (`video_gen.provider`, video-backends.ts),
 * waited for with progress, and saved into the session's workspace: the result names the file,
 * never only a remote URL. Every rule is checked before anything is sent; interrupting the
 * turn cancels the job upstream.
 */
import { mkdir, readFile, realpath, stat } from "node:fs/promises";
import { extname, join, relative, sep } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { z } from "zod";
import type { AgentConfig } from "../../../../shared/config/defaults.js";
import { ToolFailure } from "../../../../shared/errors.js";
import { multimodalResult } from "../../../tools/multimodal.js";
import { defineTool, resolvePath, type ToolDefinition } from "../../../tools/definition.js";
import type { ToolContext } from "../../../tools/types.js";
import { download } from "../upstream-http.js";
import { type PreparedSubmit, prepareEndpoint, prepareQueue } from "./video-backends.js";
import type { VideoArgs } from "./video-models.js";

/** The first poll comes soon (short jobs), then the wait grows to this. */
const POLL_FIRST_MS = 200;
const POLL_MAX_MS = 5_000;
/** A local image is sent inline; larger ones are refused. */
const MAX_INLINE_IMAGE_BYTES = 10 * 1024 * 1024;
/** A downloaded video (a minute of 4K is well below it) and its poster frame: the disk is not the backend's to fill. */
const MAX_VIDEO_BYTES = 2 * 1024 * 1024 * 1024;
const MAX_POSTER_BYTES = 20 * 1024 * 1024;
const IMAGE_TYPES: Record<string, string> = { ".png": "image/png", ".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".webp": "image/webp", ".gif": "image/gif" };

/** The key each provider reads: VIDEO_GEN_API_KEY for both, or the queue vendor's own FAL_KEY. */
export function videoKey(provider: string, env: NodeJS.ProcessEnv): string | undefined {
  return env.VIDEO_GEN_API_KEY || (provider === "queue" ? env.FAL_KEY : undefined) || undefined;
}

export interface VideoToolDeps {
  /** The profile's effective config (video_gen.*). */
  config(profile: string | undefined): AgentConfig;
}

const Args = z
  .object({
    prompt: z.string().min(1).max(4_000).describe("What the video shows"),
    image_url: z.string().min(1).optional().describe("An image to animate (URL, or a file in the workspace): image-to-video"),
    reference_image_urls: z.array(z.string().min(1)).optional().describe("Reference images for the look (URLs or workspace files)"),
    duration: z.number().positive().max(60).optional().describe("Seconds"),
    aspect_ratio: z.string().optional().describe("For example 16:9, 9:16 or 1:1"),
    resolution: z.string().optional().describe("For example 480p or 720p"),
    negative_prompt: z.string().max(2_000).optional(),
    audio: z.boolean().optional().describe("Generate sound as well"),
    seed: z.number().int().optional(),
    model: z.string().optional().describe("A model of the configured backend (default: the configured one)"),
  })
  .strict();

/** A URL as it is; a path must be a file in the workspace, sent inline as a data URL. */
async function imageRef(value: string, ctx: ToolContext): Promise<string> {
  if (/^(https?|data):/i.test(value)) return value;
  const path = resolvePath(value, ctx);
  let real: string;
  let root: string;
  try {
    real = await realpath(path);
    root = await realpath(ctx.cwd);
  } catch {
    throw new ToolFailure("invalid_arguments", `image not found: ${value}`);
  }
  const rel = relative(root, real);
  if (rel === ".." || rel.startsWith(`..${sep}`) || rel.startsWith(sep))
    throw new ToolFailure("outside_workspace", `${value} is outside the workspace (${ctx.cwd}); copy it in first`);
  const type = IMAGE_TYPES[extname(real).toLowerCase()];
  if (!type) throw new ToolFailure("invalid_arguments", `${value} is not an image the backend takes (${Object.keys(IMAGE_TYPES).join(", ")})`);
  const info = await stat(real);
  if (info.size > MAX_INLINE_IMAGE_BYTES) throw new ToolFailure("invalid_arguments", `${value} is larger than ${MAX_INLINE_IMAGE_BYTES / 1024 / 1024} MiB`);
  return `data:${type};base64,${(await readFile(real)).toString("base64")}`;
}

function slug(text: string): string {
  return (
    text
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 40) || "video"
  );
}

function stamp(now: Date): string {
  return now.toISOString().replace(/[-:]/g, "").replace("T", "-").slice(0, 15);
}

export function videoGenerateTool(deps: VideoToolDeps): ToolDefinition<z.infer<typeof Args>> {
  return defineTool({
    name: "video_generate",
    description:
      "Generate a short video from a text prompt, or from an image (image_url: image-to-video). The video is saved into the workspace; the result gives its path. It can take minutes.",
    toolset: "media",
    args: Args,
    requires: "VIDEO_GEN_API_KEY (or FAL_KEY for video_gen.provider queue) in the profile's .env",
    available: (ctx) => Boolean(videoKey(deps.config(ctx.profile).video_gen.provider, ctx.env ?? {})),
    async run(args, ctx) {
      const cfg = deps.config(ctx.profile).video_gen;
      const apiKey = videoKey(cfg.provider, ctx.env);
      if (!apiKey) throw new ToolFailure("not_configured", "no video API key: set VIDEO_GEN_API_KEY (or FAL_KEY for the queue backend) in .env");
      if (!cfg.base_url)
        throw new ToolFailure("not_configured", `video_gen.base_url is not set: agent config set video_gen.base_url <your ${cfg.provider} backend's API base>`);
      // Every rule before any network call: the model route, then local images (inlined).
      const prepare = (a: VideoArgs): PreparedSubmit =>
        (cfg.provider === "endpoint" ? prepareEndpoint : prepareQueue)(a, { baseUrl: cfg.base_url, apiKey, model: cfg.model });
      prepare(args);
      const resolved: VideoArgs = { ...args };
      if (args.image_url) resolved.image_url = await imageRef(args.image_url, ctx);
      if (args.reference_image_urls) resolved.reference_image_urls = await Promise.all(args.reference_image_urls.map((u) => imageRef(u, ctx)));
      const prepared = prepare(resolved);

      const deadline = AbortSignal.timeout(cfg.timeout_seconds * 1000);
      const signal = AbortSignal.any([ctx.signal, deadline]);
      const started = Date.now();
      const job = await prepared.submit(signal);
      ctx.progress?.(`video: submitted to ${job.model}`);
      try {
        let wait = POLL_FIRST_MS;
        for (;;) {
          const st = await job.poll(signal);
          if (st.done && st.result) {
            const dir = join(ctx.cwd, "videos");
            await mkdir(dir, { recursive: true });
            const base = join(dir, `${stamp(new Date())}-${slug(args.prompt)}`);
            ctx.progress?.("video: downloading");
            const path = `${base}.mp4`;
            const size = await download(st.result.url, path, signal, `the video download (${job.model})`, MAX_VIDEO_BYTES);
            const output = {
              success: true,
              modality: job.modality,
              model: job.model,
              path: relative(ctx.cwd, path),
              absolute_path: path,
              duration: st.result.duration ?? null,
              size_bytes: size,
              source_url: st.result.url,
            };
            if (!st.result.posterUrl) return { ok: true, output };
            const poster = `${base}.jpg`;
            await download(st.result.posterUrl, poster, signal, "the poster frame", MAX_POSTER_BYTES).catch(() => null);
            const bytes = await readFile(poster).catch(() => null);
            if (!bytes) return { ok: true, output };
            const text = JSON.stringify({ ...output, poster: relative(ctx.cwd, poster) });
            return { ok: true, output: multimodalResult({ text, images: [{ mime: "image/jpeg", base64: bytes.toString("base64") }] }) };
          }
          const secs = Math.round((Date.now() - started) / 1000);
          ctx.progress?.(`video: ${st.state}${st.position !== undefined ? ` (position ${st.position})` : ""}, ${secs} s`);
          await sleep(wait, undefined, { signal });
          wait = Math.min(POLL_MAX_MS, Math.round(wait * 1.6));
        }
      } catch (error) {
        if (signal.aborted) {
          await job.cancel();
          if (deadline.aborted && !ctx.signal.aborted)
            throw new ToolFailure("timeout", `the video was not ready within video_gen.timeout_seconds (${cfg.timeout_seconds} s); the job was cancelled`);
        }
        throw error;
      }
    },
  });
}
