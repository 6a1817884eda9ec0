import { createInterface, type Interface } from "node:readline";
import { AgentError, toAgentError } from "../../shared/errors.js";
import type { Params, Result } from "../../shared/protocol/index.js";
import type { SetupCurrent, SetupPreset } from "../../shared/protocol/setup.js";
import { terminalText } from "../../shared/terminal-text.js";
import type { DaemonClient } from "../../shared/client/index.js";
import { parseCommand } from "../args.js";
import type { CliEnv } from "../command.js";
import { EXIT } from "../exit-codes.js";
import { printResult } from "../output.js";
import { withDaemon } from "../with-daemon.js";

const SPEC = {
  usage: "agent setup [options]",
  description: "Set up a model provider: pick a preset, give the key, choose a model, test it.",
  flags: {
    provider: { type: "string" },
    baseUrl: { type: "string" },
    apiKeyEnv: { type: "string" },
    key: { type: "string" },
    keyStdin: { type: "boolean" },
    model: { type: "string" },
    test: { type: "boolean", default: true },
    yes: { type: "boolean", shortFlag: "y" },
  },
  help: `Without options it asks (on a terminal). With them it runs for scripts:
  --provider <preset|name>  openai, openrouter, ollama, llamacpp, vllm, custom; any other
                            name is an OpenAI-compatible endpoint of that name (needs --base-url)
  --base-url <url>          the endpoint (default: the preset's)
  --api-key-env <VAR>       the .env variable holding the key (default: the preset's, or <NAME>_API_KEY)
  --key <key>               the API key (visible in the process list: prefer --key-stdin)
  --key-stdin               read the API key from the first line of stdin
  --model <name>            the model (must be one the endpoint lists, when it lists any)
  --no-test                 skip the test call (and the model-list check)
  -y, --yes                 do not ask: replace a configured provider, fail on anything missing

The key goes to $AGENT_HOME/.env (mode 0600), never to config.yaml or a log.

Examples
  $ agent setup
  $ printf '%s\\n' "$KEY" | agent setup --provider openai --key-stdin --model gpt-4o -y
  $ agent setup --provider local --base-url http://127.0.0.1:8080/v1 --model qwen2.5 -y`,
} as const;

type Flags = ReturnType<typeof parseCommand<typeof SPEC.flags>>["flags"];
type ApplyResult = Result<"setup.apply">;

export async function run(argv: string[], env: CliEnv): Promise<number> {
  const cli = parseCommand(argv, SPEC);
  if (cli.input.length) throw new AgentError("usage.invalid", `agent setup takes no arguments (got ${cli.input.join(" ")}); see --help`);
  const f = cli.flags;
  if (f.key !== undefined && f.keyStdin) throw new AgentError("usage.invalid", "give the key with --key or --key-stdin, not both");
  const ask = !f.yes && Boolean(process.stdin.isTTY) && !f.keyStdin && !f.json;
  const key = f.keyStdin ? await readKeyFromStdin() : f.key;
  return withDaemon(env, async (client) => {
    const status = await client.call("setup.status", {});
    const prompter = ask ? new Prompter() : null;
    try {
      const params = prompter ? await interview(client, prompter, status, f, key) : await fromFlags(status, f, key);
      if (!params) return EXIT.ok;
      if (prompter && params.test) process.stdout.write(`testing ${params.model} at ${params.baseUrl}… `);
      let result: ApplyResult;
      try {
        result = await client.call("setup.apply", params);
      } catch (error) {
        if (prompter && params.test) process.stdout.write("failed\n");
        throw error;
      }
      if (prompter && params.test) process.stdout.write("ok\n");
      printResult(result, Boolean(f.json), (r) => summary(r));
      return EXIT.ok;
    } finally {
      prompter?.close();
    }
  });
}

function summary(r: ApplyResult): string {
  return [
    r.tested ? `test call ok (${r.tested.ms} ms): ${JSON.stringify(r.tested.reply)}` : "no test call (--no-test)",
    `saved provider "${r.provider}" (${r.model} at ${r.baseUrl}) as the default in ${r.configFile}`,
    r.keyStored ? `the key is in ${r.envFile} as ${r.keyEnv} (mode 0600)` : r.keyEnv ? `the key is read from ${r.keyEnv}` : "no key (a local server)",
    ...(r.removed.length ? [`removed ${r.removed.join(" and ")} (they would override the provider's model)`] : []),
    "try it: agent chat -q hello",
  ].join("\n");
}

function describe(c: SetupCurrent): string {
  const key = c.keyEnv ? `, key ${c.keyEnv} ${c.keySet ? "set" : "NOT set"}` : "";
  return `${c.provider ?? "(no name)"}: ${c.model ?? "(no model)"} at ${c.baseUrl ?? "(no URL)"}${key}${c.problem ? `\n  problem: ${c.problem.split("\n")[0]}` : ""}`;
}

/** The non-interactive path: everything from the flags; anything missing is a usage error. */
async function fromFlags(status: Result<"setup.status">, f: Flags, key: string | undefined): Promise<Params<"setup.apply">> {
  if (!f.provider) throw new AgentError("usage.missing_value", "agent setup without a terminal needs --provider (and --model); see agent setup --help");
  if (!f.model) throw new AgentError("usage.missing_value", "agent setup needs --model <name> when it cannot ask");
  const preset = status.presets.find((p) => p.id === f.provider);
  const name = preset && preset.id !== "custom" ? preset.name : f.provider;
  const baseUrl = f.baseUrl ?? preset?.baseUrl;
  if (!baseUrl) throw new AgentError("usage.missing_value", `--provider ${f.provider} needs --base-url <url> (an OpenAI-compatible endpoint)`);
  return {
    name,
    baseUrl,
    model: f.model,
    ...keyParams(preset, f.apiKeyEnv, key),
    test: f.test,
    replace: Boolean(f.yes),
  };
}

function keyParams(preset: SetupPreset | undefined, apiKeyEnv: string | undefined, key: string | undefined): { apiKey?: string; apiKeyEnv?: string } {
  const envName = apiKeyEnv ?? preset?.keyEnv ?? undefined;
  return { ...(key !== undefined ? { apiKey: key } : {}), ...(envName ? { apiKeyEnv: envName } : {}) };
}

/** The guided path: each question the flags did not answer. Null when the user keeps the current setting. */
async function interview(
  client: DaemonClient,
  ask: Prompter,
  status: Result<"setup.status">,
  f: Flags,
  givenKey: string | undefined,
): Promise<Params<"setup.apply"> | null> {
  const out = (s: string) => process.stdout.write(terminalText(s));
  let replace = false;
  const c = status.current;
  if (c.configured || c.provider !== null || c.baseUrl !== null) {
    out(`Current provider: ${describe(c)}\n`);
    if (!(await ask.yesNo("Replace it?", false))) {
      out("nothing changed\n");
      return null;
    }
    replace = true;
  }
  let preset = f.provider ? status.presets.find((p) => p.id === f.provider) : undefined;
  let name = f.provider && !preset ? f.provider : undefined;
  if (!f.provider) {
    out("Which model provider?\n");
    out(status.presets.map((p, i) => `  ${i + 1}. ${p.label}${p.baseUrl ? `  (${p.baseUrl})` : ""}\n`).join(""));
    const i = await ask.choose("Number", status.presets.length);
    preset = status.presets[i];
  }
  let baseUrl = f.baseUrl ?? (preset?.baseUrl || undefined);
  if (!baseUrl) baseUrl = await ask.line("Base URL of the endpoint (e.g. http://127.0.0.1:8080/v1): ", (v) => (v ? null : "a URL is needed"));
  if (preset?.id === "custom" && !name) name = (await ask.line("A name for it in config.yaml [custom]: ")) || "custom";
  name ??= preset!.name;
  let apiKeyEnv = f.apiKeyEnv ?? preset?.keyEnv ?? undefined;
  let key = givenKey;
  if (key === undefined) {
    const current = apiKeyEnv ? status.current.keyEnv === apiKeyEnv && status.current.keySet : false;
    const hint = preset?.needsKey ? (current ? ` (Enter keeps the ${apiKeyEnv} already in .env)` : "") : " (Enter for none: local servers usually take no key)";
    const typed = await ask.secret(`API key${hint}: `);
    if (typed) key = typed;
  }
  if (key !== undefined && !apiKeyEnv && preset?.id === "custom") {
    const suggested = `${name.toUpperCase().replace(/[^A-Z0-9]/g, "_")}_API_KEY`;
    apiKeyEnv = (await ask.line(`Name of its variable in .env [${suggested}]: `)) || suggested;
  }
  const endpoint = { baseUrl, ...keyParams(undefined, apiKeyEnv, key) };
  let model = f.model;
  if (!model) {
    out(`asking ${baseUrl} for its models…\n`);
    let models: string[];
    try {
      ({ models } = await client.call("setup.models", endpoint));
    } catch (error) {
      // Some servers have no model list (404): the name is typed, and the test call checks it.
      if (toAgentError(error).code !== "model.not_found") throw error;
      out(`${baseUrl} has no model list (GET /models answered 404)\n`);
      models = [];
    }
    if (!models.length) {
      const typed = await ask.line("Model name: ", (v) => (v ? null : "a model name is needed"));
      return { name, ...endpoint, model: typed, test: f.test, replace };
    }
    const shown = models.slice(0, 40);
    out(shown.map((m, i) => `  ${String(i + 1).padStart(2)}. ${m}\n`).join(""));
    if (models.length > shown.length) out(`  … and ${models.length - shown.length} more (type a name)\n`);
    const answer = await ask.line("Model (number or name): ", (v) => {
      if (!v) return "pick a number or type a model name";
      if (/^\d+$/.test(v) && (Number(v) < 1 || Number(v) > shown.length)) return `a number from 1 to ${shown.length}`;
      return null;
    });
    model = /^\d+$/.test(answer) ? shown[Number(answer) - 1]! : answer;
  }
  return { name, ...endpoint, model, test: f.test, replace };
}

async function readKeyFromStdin(): Promise<string> {
  if (process.stdin.isTTY) throw new AgentError("usage.invalid", "--key-stdin reads the key from a pipe: printf '%s\\n' \"$KEY\" | agent setup --key-stdin …");
  let data = "";
  for await (const chunk of process.stdin) data += chunk;
  const key = data.split(/\r?\n/)[0]!.trim();
  if (!key) throw new AgentError("usage.invalid", "--key-stdin got no key on stdin");
  return key;
}

/** Questions on the terminal: one readline for the whole interview, the key typed without echo. */
class Prompter {
  private readonly rl: Interface;
  /** While a key is typed: its prompt (echoed) — nothing typed is. */
  private muted: string | null = null;

  constructor() {
    this.rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    const rl = this.rl as unknown as { _writeToOutput(s: string): void };
    const write = rl._writeToOutput.bind(rl);
    rl._writeToOutput = (s: string) => {
      if (this.muted === null) write(s);
      else if (s.startsWith(this.muted)) write(this.muted);
      else if (s.includes("\n")) write("\n");
    };
    this.rl.on("SIGINT", () => {
      process.stdout.write("\nset-up cancelled; nothing changed\n");
      process.exit(EXIT.interrupted);
    });
  }

  private question(prompt: string): Promise<string> {
    return new Promise((resolve, reject) => {
      const onClose = () => reject(new AgentError("usage.invalid", "set-up cancelled (end of input); nothing changed"));
      this.rl.once("close", onClose);
      this.rl.question(prompt, (answer) => {
        this.rl.off("close", onClose);
        resolve(answer.trim());
      });
    });
  }

  async line(prompt: string, check?: (v: string) => string | null): Promise<string> {
    for (;;) {
      const v = await this.question(prompt);
      const problem = check?.(v) ?? null;
      if (!problem) return v;
      process.stdout.write(`  ${problem}\n`);
    }
  }

  async choose(prompt: string, count: number): Promise<number> {
    const v = await this.line(`${prompt} [1-${count}]: `, (x) =>
      /^\d+$/.test(x) && Number(x) >= 1 && Number(x) <= count ? null : `a number from 1 to ${count}`,
    );
    return Number(v) - 1;
  }

  async yesNo(prompt: string, dflt: boolean): Promise<boolean> {
    const v = (await this.line(`${prompt} [${dflt ? "Y/n" : "y/N"}] `, (x) => (/^(y|yes|n|no|)$/i.test(x) ? null : "y or n"))).toLowerCase();
    return v ? v.startsWith("y") : dflt;
  }

  async secret(prompt: string): Promise<string> {
    this.muted = prompt;
    try {
      return await this.question(prompt);
    } finally {
      this.muted = null;
    }
  }

  close(): void {
    this.rl.close();
  }
}
