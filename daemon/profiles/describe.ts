import { OpenAIChatModel } from "../models/openai-chat.js";
import { RateLimitBook } from "../models/rate-limits.js";
import { resolveProvider } from "../models/resolve.js";
import type { ProfileManager } from "./profile-service.js";

const rateLimits = new RateLimitBook();

/**
 * A profile's description written by the model in the `auxiliary.profile_describer` slot (its
 * provider and/or model; empty means the profile's main model), from the profile's SOUL.md,
 * skill names and model config. One sentence, at most 300 characters.
 */
export async function generateDescription(profiles: ProfileManager, name: string): Promise<string> {
  const view = await profiles.config(name);
  const config = view.current();
  const slot = config.auxiliary.profile_describer;
  const provider = resolveProvider(config, view.env(), profiles.paths(name).dir, slot.provider ? { provider: slot.provider } : {});
  if (slot.model) provider.model = slot.model;
  const model = new OpenAIChatModel(provider, rateLimits);
  const soul = await profiles.soul(name);
  const skills = await profiles.skillNames(name);
  const facts = [
    `Profile name: ${name}`,
    `Model: ${config.model.name || config.model.provider || "(default)"}`,
    `Skills: ${skills.length ? skills.join(", ") : "(none)"}`,
    `SOUL.md (its persona):\n${soul ? soul.slice(0, 6000) : "(none)"}`,
  ].join("\n");
  const reply = await model.complete({
    messages: [
      {
        role: "system",
        content:
          "You write one-line descriptions of AI agent profiles for a list. Answer with the description only: one sentence, at most 20 words, no quotes.",
      },
      { role: "user", content: facts },
    ],
    signal: AbortSignal.timeout(Math.max(provider.readTimeoutMs * 2, 30_000)),
  });
  const line =
    reply.content
      .trim()
      .split("\n")
      .find((l) => l.trim()) ?? "";
  return (
    line
      .trim()
      .replace(/^["']|["']$/g, "")
      .slice(0, 300) || `profile ${name}`
  );
}
