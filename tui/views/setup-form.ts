import type { Params } from "../../shared/protocol/index.js";
import { errorText, type AppContext } from "./view.js";

/**
 * The guided set-up in the TUI (the no-model panel's `s`): the same questions as `agent setup`,
 * asked with the app's prompts, answered by the same daemon RPCs (setup.status, setup.models,
 * setup.apply). `say` puts a line in the chat transcript. Resolves true once a provider is saved.
 */
export async function runSetupForm(app: AppContext, say: (text: string, level?: "info" | "error" | "ok") => void): Promise<boolean> {
  try {
    const status = await app.conn.call("setup.status", {});
    const c = status.current;
    let replace = false;
    if (c.configured || c.provider !== null || c.baseUrl !== null) {
      if (!(await app.confirm(`Replace the current provider ${c.provider ?? "?"} (${c.model ?? "no model"} at ${c.baseUrl ?? "?"})?`))) return cancelled(say);
      replace = true;
    }
    say(`Set-up: which model provider?\n${status.presets.map((p, i) => `  ${i + 1}. ${p.label}${p.baseUrl ? `  (${p.baseUrl})` : ""}`).join("\n")}`);
    const pick = await ask(app, `Provider: a number from 1 to ${status.presets.length}`, "", say, (v) =>
      /^\d+$/.test(v) && Number(v) >= 1 && Number(v) <= status.presets.length ? null : `a number from 1 to ${status.presets.length}`,
    );
    if (pick === null) return cancelled(say);
    const preset = status.presets[Number(pick) - 1]!;
    let baseUrl = preset.baseUrl;
    let name = preset.name;
    if (!baseUrl) {
      const url = await ask(app, "Base URL of the endpoint (e.g. http://127.0.0.1:8080/v1)", "", say, (v) => (v ? null : "a URL is needed"));
      if (url === null) return cancelled(say);
      baseUrl = url;
      const n = await ask(app, "A name for it in config.yaml", "custom", say, (v) => (v ? null : "a name is needed"));
      if (n === null) return cancelled(say);
      name = n;
    }
    const keyLabel = preset.needsKey
      ? `API key (stored in .env as ${preset.keyEnv}; empty keeps the one there)`
      : "API key (empty for none: local servers usually take no key)";
    const key = await app.prompt(keyLabel, "", { secret: true });
    if (key === null) return cancelled(say);
    const endpoint: Pick<Params<"setup.apply">, "baseUrl" | "apiKey" | "apiKeyEnv"> = {
      baseUrl,
      ...(key.trim() ? { apiKey: key.trim() } : {}),
      ...(preset.keyEnv ? { apiKeyEnv: preset.keyEnv } : {}),
    };
    say(`asking ${baseUrl} for its models…`);
    app.requestRender();
    const { models } = await app.conn.call("setup.models", endpoint);
    const shown = models.slice(0, 30);
    say(
      `Models:\n${shown.map((m, i) => `  ${i + 1}. ${m}`).join("\n")}${models.length > shown.length ? `\n  … and ${models.length - shown.length} more (type a name)` : ""}`,
    );
    const answer = await ask(app, "Model: its number or its name", "", say, (v) => {
      if (!v) return "pick a number or type a model name";
      if (/^\d+$/.test(v) && (Number(v) < 1 || Number(v) > shown.length)) return `a number from 1 to ${shown.length}`;
      return null;
    });
    if (answer === null) return cancelled(say);
    const model = /^\d+$/.test(answer) ? shown[Number(answer) - 1]! : answer;
    say(`testing ${model} at ${baseUrl}…`);
    app.requestRender();
    const r = await app.conn.call("setup.apply", { name, model, ...endpoint, test: true, replace });
    say(
      `saved provider "${r.provider}" (${r.model} at ${r.baseUrl}) in ${r.configFile}${r.keyStored ? `; the key is in ${r.envFile} as ${r.keyEnv}` : ""}. Test call ok (${r.tested?.ms ?? 0} ms). Type a message to start.`,
      "ok",
    );
    return true;
  } catch (error) {
    say(`set-up failed, nothing changed: ${errorText(error)}`, "error");
    return false;
  }
}

/** A prompt asked again until `check` passes; null when cancelled (Esc). */
async function ask(
  app: AppContext,
  label: string,
  initial: string,
  say: (text: string, level?: "info" | "error" | "ok") => void,
  check: (v: string) => string | null,
): Promise<string | null> {
  for (;;) {
    const v = await app.prompt(label, initial);
    if (v === null) return null;
    const problem = check(v.trim());
    if (!problem) return v.trim();
    say(problem, "error");
  }
}

function cancelled(say: (text: string) => void): false {
  say("set-up cancelled; nothing changed");
  return false;
}
