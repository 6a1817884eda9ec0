/**
 * What video_generate may ask each backend for, checked before any network call: the queue
 * backend's model families (each with a text-to-video and an image-to-video model, chosen by
 * whether `image_url` is given) and the endpoint backend's limits.
 */
import { ToolFailure } from "../../../../shared/errors.js";

export type Modality = "text" | "image";

export interface VideoArgs {
  prompt: string;
  image_url?: string;
  reference_image_urls?: string[];
  duration?: number;
  aspect_ratio?: string;
  resolution?: string;
  negative_prompt?: string;
  audio?: boolean;
  seed?: number;
  model?: string;
}

/** A queue family: its two model paths and the input key its image-to-video model reads the image from. */
export interface QueueFamily {
  text: string;
  image: string;
  imageKey: "image_url" | "start_image_url";
}

export const QUEUE_FAMILIES: Readonly<Record<string, QueueFamily>> = Object.freeze({
  "veo3.1": { text: "veo3.1/text-to-video", image: "veo3.1/image-to-video", imageKey: "image_url" },
  "pixverse-v6": { text: "pixverse-v6/text-to-video", image: "pixverse-v6/image-to-video", imageKey: "image_url" },
  "ltx-2.3": { text: "ltx-2.3/text-to-video", image: "ltx-2.3/image-to-video", imageKey: "image_url" },
  "seedance-2.0": { text: "seedance-2.0/text-to-video", image: "seedance-2.0/image-to-video", imageKey: "image_url" },
  "kling-v3-4k": { text: "kling-v3-4k/text-to-video", image: "kling-v3-4k/image-to-video", imageKey: "start_image_url" },
  "happy-horse": { text: "happy-horse/text-to-video", image: "happy-horse/image-to-video", imageKey: "image_url" },
});
export const QUEUE_DEFAULT_FAMILY = "pixverse-v6";

export const ENDPOINT_DEFAULT_MODEL = "video-1";
export const ENDPOINT_ASPECT_RATIOS = ["16:9", "1:1", "2:3", "3:2", "3:4", "4:3", "9:16"] as const;
export const ENDPOINT_RESOLUTIONS = ["480p", "720p"] as const;
export const ENDPOINT_MAX_REFERENCES = 7;
export const ENDPOINT_DURATION = { min: 1, max: 15 } as const;

const bad = (message: string) => new ToolFailure("invalid_arguments", message);

/** The queue model for a call: `family` (routed by modality) or an explicit `family/text-to-video|image-to-video`. */
export function routeQueueModel(model: string, args: VideoArgs): { path: string; family: string; imageKey: QueueFamily["imageKey"]; modality: Modality } {
  const [familyName, variant] = model.includes("/") ? [model.slice(0, model.indexOf("/")), model.slice(model.indexOf("/") + 1)] : [model, ""];
  const family = QUEUE_FAMILIES[familyName];
  if (!family) throw bad(`unknown video model "${model}"; the families are ${Object.keys(QUEUE_FAMILIES).join(", ")}`);
  if (variant && variant !== "text-to-video" && variant !== "image-to-video") {
    throw bad(`unknown variant "${variant}" of ${familyName}; use text-to-video or image-to-video`);
  }
  if (variant === "image-to-video" && !args.image_url) {
    throw new ToolFailure("missing_image_url", `${model} makes a video from an image: give image_url`);
  }
  if (variant === "text-to-video" && args.image_url) throw bad(`${model} makes a video from text only; drop image_url or use ${familyName}/image-to-video`);
  const modality: Modality = args.image_url ? "image" : "text";
  return { path: modality === "image" ? family.image : family.text, family: familyName, imageKey: family.imageKey, modality };
}

/** The endpoint backend's rules: references, modality, duration clamped, ratios and resolutions named. */
export function checkEndpointArgs(args: VideoArgs): { duration?: number } {
  const refs = args.reference_image_urls ?? [];
  if (refs.length > ENDPOINT_MAX_REFERENCES) throw bad(`at most ${ENDPOINT_MAX_REFERENCES} reference images, not ${refs.length}`);
  if (args.image_url && refs.length) throw bad("image_url (image-to-video) cannot be combined with reference_image_urls; give one or the other");
  if (args.aspect_ratio !== undefined && !(ENDPOINT_ASPECT_RATIOS as readonly string[]).includes(args.aspect_ratio)) {
    throw bad(`aspect_ratio must be one of ${ENDPOINT_ASPECT_RATIOS.join(", ")}`);
  }
  if (args.resolution !== undefined && !(ENDPOINT_RESOLUTIONS as readonly string[]).includes(args.resolution)) {
    throw bad(`resolution must be one of ${ENDPOINT_RESOLUTIONS.join(", ")}`);
  }
  if (args.duration === undefined) return {};
  return { duration: Math.min(ENDPOINT_DURATION.max, Math.max(ENDPOINT_DURATION.min, Math.round(args.duration))) };
}
