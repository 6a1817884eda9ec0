/**
 * The one JSON convention of the CLI (docs/cli.md): every `--json` output is one object with
 * snake_case keys. The RPC results keep the casing the daemon and the TUI use; the conversion
 * happens once, in cli/output.ts (printResult, printJson) for every command, and in the kanban
 * worker's `agent chat -q --json` (daemon/agent/worker-main.ts). The values under the keys
 * below are user data (an actor's state, a config value, a log record's fields, an event's
 * payload, an MCP tool's JSON Schema): they are printed as they are, whatever their keys look like.
 */
export const USER_DATA_KEYS: ReadonlySet<string> = new Set([
  "state",
  "input",
  "output",
  "value",
  "values",
  "fields",
  "data",
  "metadata",
  "args",
  "arguments",
  "error",
  "content",
  "input_schema",
  "schema",
]);

/**
 * `uptimeMs` → `uptime_ms`. Only camelCase is converted: a key that starts with a capital or
 * holds anything but letters and digits (`OPENAI_API_KEY`, `Counter`, `gateway.port`) is a name
 * someone chose and stays as it is.
 */
const snake = (key: string) =>
  /^[a-z][A-Za-z0-9]*[A-Z]/.test(key) && /^[A-Za-z0-9]+$/.test(key)
    ? key
        .replace(/([a-z0-9])([A-Z])/g, "$1_$2")
        .replace(/([A-Z])([A-Z][a-z])/g, "$1_$2")
        .toLowerCase()
    : key;

/** `value` with every object key (outside user data) in snake_case. */
export function snakeKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(snakeKeys);
  if (value === null || typeof value !== "object") return value;
  if (Object.getPrototypeOf(value) !== Object.prototype && Object.getPrototypeOf(value) !== null) {
    // A Date, a class instance: what JSON.stringify would make of it.
    const json = (value as { toJSON?: () => unknown }).toJSON?.();
    return json === undefined ? value : snakeKeys(json);
  }
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    const name = snake(key);
    out[name] = USER_DATA_KEYS.has(name) ? v : snakeKeys(v);
  }
  return out;
}
