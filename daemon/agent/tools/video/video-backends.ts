/**
 * The two video backends behind video_generate. Both take a job and are polled for it:
 * - queue: `POST <base>/<family>/<text-to-video|image-to-video>` → `{request_id, status_url,
 *   response_url, cancel_url}`; the status answers IN_QUEUE (with `queue_position`),
 *   IN_PROGRESS, COMPLETED or FAILED; the response holds `video.url` (and `thumbnail.url`);
 *   a cancel is `PUT cancel_url`. Authorization: `Key <key>`.
 * - endpoint: one endpoint for both modalities, `POST <base>/videos/generations` → `{id}`,
 *   `GET <base>/videos/generations/<id>` → `{status: queued|in_progress|completed|failed,
 *   video: {url, duration}, poster_url}`, a cancel is `DELETE` of the same URL. Authorization: Bearer.
 */
import { jsonCall } from "../upstream-http.js";
import { checkEndpointArgs, ENDPOINT_DEFAULT_MODEL, type Modality, QUEUE_DEFAULT_FAMILY, routeQueueModel, type VideoArgs } from "./video-models.js";

export interface JobStatus {
  done: boolean;
  /** The backend's word for where the job is (for the progress line). */
  state: string;
  position?: number;
  result?: { url: string; duration?: number; posterUrl?: string };
}

export interface VideoJob {
  model: string;
  modality: Modality;
  poll(signal: AbortSignal): Promise<JobStatus>;
  cancel(): Promise<void>;
}

export interface BackendOptions {
  baseUrl: string;
  apiKey: string;
  model: string;
}

/** Checks the arguments (no network) and returns the submit step, so nothing is sent for a call that fails its rules. */
export type PreparedSubmit = { model: string; modality: Modality; submit(signal: AbortSignal): Promise<VideoJob> };

const base = (url: string) => url.replace(/\/+$/, "");
const CANCEL_TIMEOUT_MS = 5_000;

/** The optional settings both backends pass on under their own names. */
function common(args: VideoArgs): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (args.aspect_ratio !== undefined) out.aspect_ratio = args.aspect_ratio;
  if (args.resolution !== undefined) out.resolution = args.resolution;
  if (args.negative_prompt !== undefined) out.negative_prompt = args.negative_prompt;
  if (args.seed !== undefined) out.seed = args.seed;
  return out;
}

export function prepareQueue(args: VideoArgs, o: BackendOptions): PreparedSubmit {
  const route = routeQueueModel(args.model || o.model || QUEUE_DEFAULT_FAMILY, args);
  const headers = { authorization: `Key ${o.apiKey}` };
  const input: Record<string, unknown> = { prompt: args.prompt, ...common(args) };
  if (args.image_url) input[route.imageKey] = args.image_url;
  if (args.reference_image_urls?.length) input.reference_image_urls = args.reference_image_urls;
  if (args.duration !== undefined) input.duration = args.duration;
  if (args.audio !== undefined) input.generate_audio = args.audio;
  const modelName = route.path;
  return {
    model: modelName,
    modality: route.modality,
    async submit(signal) {
      const what = `the video queue (${modelName})`;
      const url = `${base(o.baseUrl)}/${route.path}`;
      const sub = await jsonCall<{ request_id?: string; status_url?: string; response_url?: string; cancel_url?: string }>(url, {
        body: input,
        headers,
        signal,
        what,
      });
      if (!sub.request_id) throw new Error(`${what}: the submit answer has no request_id`);
      const requestUrl = `${url}/requests/${encodeURIComponent(sub.request_id)}`;
      const statusUrl = sub.status_url ?? `${requestUrl}/status`;
      const responseUrl = sub.response_url ?? requestUrl;
      const cancelUrl = sub.cancel_url ?? `${requestUrl}/cancel`;
      return {
        model: modelName,
        modality: route.modality,
        async poll(s) {
          const st = await jsonCall<{ status?: string; queue_position?: number; error?: unknown }>(statusUrl, { headers, signal: s, what });
          const state = String(st.status ?? "UNKNOWN");
          if (state === "FAILED" || state === "ERROR")
            throw new Error(`${what}: the job failed: ${typeof st.error === "string" ? st.error : JSON.stringify(st.error ?? state)}`);
          if (state !== "COMPLETED") return { done: false, state, position: st.queue_position };
          const r = await jsonCall<{ video?: { url?: string; duration?: number }; thumbnail?: { url?: string } }>(responseUrl, { headers, signal: s, what });
          if (!r.video?.url) throw new Error(`${what}: the finished job has no video URL`);
          return { done: true, state, result: { url: r.video.url, duration: r.video.duration, posterUrl: r.thumbnail?.url } };
        },
        async cancel() {
          await jsonCall(cancelUrl, { method: "PUT", headers, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), what }).catch(() => undefined);
        },
      };
    },
  };
}

export function prepareEndpoint(args: VideoArgs, o: BackendOptions): PreparedSubmit {
  const { duration } = checkEndpointArgs(args);
  const model = args.model || o.model || ENDPOINT_DEFAULT_MODEL;
  const modality: Modality = args.image_url ? "image" : "text";
  const headers = { authorization: `Bearer ${o.apiKey}` };
  const body: Record<string, unknown> = { model, prompt: args.prompt, ...common(args) };
  if (args.image_url) body.image_url = args.image_url;
  if (args.reference_image_urls?.length) body.reference_image_urls = args.reference_image_urls;
  if (duration !== undefined) body.duration = duration;
  if (args.audio !== undefined) body.audio = args.audio;
  return {
    model,
    modality,
    async submit(signal) {
      const what = `the video endpoint (${model})`;
      const url = `${base(o.baseUrl)}/videos/generations`;
      const sub = await jsonCall<{ id?: string }>(url, { body, headers, signal, what });
      if (!sub.id) throw new Error(`${what}: the submit answer has no id`);
      const jobUrl = `${url}/${encodeURIComponent(sub.id)}`;
      return {
        model,
        modality,
        async poll(s) {
          const st = await jsonCall<{ status?: string; video?: { url?: string; duration?: number }; poster_url?: string; error?: unknown }>(jobUrl, {
            headers,
            signal: s,
            what,
          });
          const state = String(st.status ?? "unknown");
          if (state === "failed") throw new Error(`${what}: the job failed: ${typeof st.error === "string" ? st.error : JSON.stringify(st.error ?? state)}`);
          if (state !== "completed") return { done: false, state };
          if (!st.video?.url) throw new Error(`${what}: the finished job has no video URL`);
          return { done: true, state, result: { url: st.video.url, duration: st.video.duration, posterUrl: st.poster_url } };
        },
        async cancel() {
          await jsonCall(jobUrl, { method: "DELETE", headers, signal: AbortSignal.timeout(CANCEL_TIMEOUT_MS), what }).catch(() => undefined);
        },
      };
    },
  };
}
