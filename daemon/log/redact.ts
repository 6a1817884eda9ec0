/**
 * Secrets never reach a log (docs/logs.md "Secrets"): every line the one logger writes passes
 * through a `Redactor` first. It removes
 * - the values of the secrets the daemon knows (the gateway and inspector tokens, and every
 *   variable of `.env` or the daemon's environment named like a secret: `*_KEY`, `*_TOKEN`,
 *   `*_SECRET`, `*PASSWORD*`, `*_WEBHOOK_URL`, `*_CLIENT_STATE`), wherever they appear (also percent-encoded or JSON-escaped);
 *   Also the values of the variables the config names as credentials (`api_key_env`,
 *   `token_env`, `*_secret_env`: whatever their names) and the secret-named entries of an MCP or
 *   LSP server's `env` map;
 * - whatever sits where a secret is sent, known or not: the token of a RivetKit gateway path
 *   (`/gateway/<id>@<token>/…`), token- and key-like query parameters (`?key=`,
 *   `?access_token=`, `&client_secret=`, signed URLs' `?sig=` / `&signature=`), `Bearer`
 *   credentials, a command's credential options (`--password X`, `--token=X`, `--api-key X`), the
 *   password of a URL (`https://user:password@host`; in a whole text, a streamed one is not held
 *   for it), header lines of a credential
 *   header (`authorization:`, `api-key:`, `x-api-key:`, `cookie:`, …), the string values of
 *   JSON credential fields quoted in a message (`"access_token"`, `"refresh_token"`,
 *   `"id_token"`, `"client_secret"`, `"api_key"`, …, also JSON-escaped inside a log line),
 *   keys by their shape (`sk-…`, `sk-proj-…`, `sk-ant-…`, GitHub's `ghp_…` / `github_pat_…`,
 *   Slack's `xoxb-…` / `xoxp-…`), and the values of fields
 *   named like a credential header or a secret (`token`, `api_key`, `password`, …).
 */

export const REDACTED = "[redacted]";

/** Secret values shorter than this are not searched for (they would blank out ordinary words). */
const MIN_SECRET_LENGTH = 6;

/** Names of environment variables whose values are secrets. */
export function isSecretEnvName(name: string): boolean {
  // A webhook URL carries its credential in the path (Teams' incoming webhook); a client state is a listener's key.
  return /(_KEY|_TOKEN|_SECRET|PASSWORD|PASSWD|_PAT|_CREDENTIALS?|_WEBHOOK_URL|_CLIENT_STATE)$/i.test(name) || /^(TOKEN|SECRET|API_?KEY)$/i.test(name);
}

/** Field names whose values are never logged, at any depth of a record. */
const SECRET_FIELD =
  /^(authorization|proxy-authorization|x-rivet-token|cookie|set-cookie|x-api-key|api[-_]?key|token|access[-_]?token|refresh[-_]?token|id[-_]?token|secret|client[-_]?secret|password|passwd|inspector[-_]?token|gateway[-_]?token)$/i;

/** Whether a field (or config key) of this name holds a credential: the list `fields` uses. */
export function isSecretFieldName(name: string): boolean {
  return SECRET_FIELD.test(name);
}

/** `/gateway/<id>@<token>` (RivetKit's path form): the token goes, the id stays. */
const PATH_TOKEN = /(\/gateway\/[^/@\s"'?#]*@)[^/\s"'?#\\]+/g;
/** `?token=…`, `&x-rivet-token=…`, `?access_token=…`, `?key=…`, `api_key=…`, `client_secret=…` … in a query string or form body. */
const QUERY_TOKEN = /([?&;](?:[\w.-]*token|(?:[\w.]*[-_])?key|apikey|[\w.-]*secret|password|passwd|authorization|sig|[\w.-]*signature)=)[^&;\s"'#\\]+/gi;
/**
 * A credential given to a command as an option (`--password X`, `--token=X`, `--api-key X`,
 * `--client-secret X`, …): on a command line, or as a quoted argv list (`"--token","X"`, also
 * JSON-escaped inside a log line).
 */
const ARGV_CREDENTIAL =
  /((?<![\w-])--(?:[a-z0-9]+[-_]){0,3}(?:password|passwd|token|api[-_]?key|apikey|secret)(?:[ \t]+|=|\\?"\s*,\s*\\?"))(?!\[redacted\]|--)(?:"[^"\s]*"|'[^'\s]*'|[^\s"'\\,\]]+)/gi;
/** `Bearer <credential>` / `Basic <credential>` in a header value that made it into a message. */
const AUTH_SCHEME = /\b(Bearer|Basic)(\s+|%20)[A-Za-z0-9._~+/=:%-]+/gi;
/** A header line (`authorization: …`, `api-key: …`, `cookie: …`) quoted in a message. */
const HEADER_LINE = /\b(authorization|proxy-authorization|x-rivet-token|cookie|set-cookie|x-api-key|api-key)(\s*[:=]\s*)(?!\[redacted\])[^\r\n"\\,;]+/gi;
/**
 * The string value of a JSON credential field quoted in a message (`{"access_token":"…"}`, an
 * OAuth response in an error), also JSON-escaped inside the log line (`{\"access_token\":\"…\"}`).
 */
const JSON_CREDENTIAL =
  /(\\?"(?:access[-_]?token|refresh[-_]?token|id[-_]?token|client[-_]?secret|api[-_]?key|apikey|x-api-key|token|secret|password|passwd)\\?"\s*:\s*\\?")(?!\[redacted\])[^"\\]+/gi;
/**
 * Keys and tokens known by their shape: OpenAI's `sk-…` / `sk-proj-…`, Anthropic's `sk-ant-…`,
 * GitHub's (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, fine-grained `github_pat_…`) and Slack's
 * (`xoxb-`, `xoxp-`, `xoxa-`, `xoxr-`, `xoxs-`).
 */
const SHAPED_KEY = /\bsk-[A-Za-z0-9_-]{16,}|\bgh[pousr]_[A-Za-z0-9]{20,}|\bgithub_pat_[A-Za-z0-9_]{20,}|\bxox[bpars]-[A-Za-z0-9-]{10,}/g;
/** RivetKit's WebSocket subprotocol carrying the token. */
const WS_PROTOCOL_TOKEN = /(rivet_token\.)[^,\s"\\]+/gi;
/**
 * The password of a URL's userinfo (`https://user:password@host/`): the user name stays. The
 * user may be empty (`redis://:password@host`), and a password written with a raw `@` in it
 * goes whole (up to the last `@` before the path, as a URL parser reads it).
 */
const URL_PASSWORD = /(\b[a-z][a-z0-9+.-]*:\/\/[^\s/:@"'\\]*:)[^\s/"'\\]+@/gi;

export class Redactor {
  private readonly sources = new Map<string, string[]>();
  /** Every form of every known secret, longest first (a token containing another is removed whole). */
  private needles: string[] = [];

  /** Replace the secrets known from one source (`config`, `env`): called at start and after every reload. */
  setSecrets(source: string, values: Iterable<string>): void {
    const kept = [...new Set([...values].filter((v) => typeof v === "string" && v.length >= MIN_SECRET_LENGTH))];
    this.sources.set(source, kept);
    const all = new Set<string>();
    for (const list of this.sources.values()) {
      for (const v of list) {
        all.add(v);
        all.add(encodeURIComponent(v));
        all.add(JSON.stringify(v).slice(1, -1));
        all.add(JSON.stringify(encodeURIComponent(v)).slice(1, -1));
      }
    }
    this.needles = [...all].filter((v) => v.length >= MIN_SECRET_LENGTH).sort((a, b) => b.length - a.length);
  }

  /** The secret values known, from every source: handed to a worker-output relay (shared/log-relay.ts) so it redacts the same. */
  values(): string[] {
    return [...new Set([...this.sources.values()].flat())];
  }

  /**
   * Where a text being streamed can be cut safely: its length less the longest tail that could
   * be the start of a known secret (held back until more arrives, so a secret split across two
   * writes is still found whole), and less the line from where a credential known only by its
   * context may start (credentialCut below), of which at most `maxContextHold` characters are
   * held (a line that never ends must not be held whole).
   */
  safeCut(text: string, maxContextHold = Number.POSITIVE_INFINITY): number {
    return Math.min(this.secretCut(text), Math.max(credentialCut(text), text.length - maxContextHold));
  }

  /** The cut that holds back a tail that could be the start of a known secret value. */
  private secretCut(text: string): number {
    let hold = 0;
    for (const needle of this.needles) {
      for (let n = Math.min(needle.length - 1, text.length); n > hold; n--) {
        if (text.endsWith(needle.slice(0, n))) {
          hold = n;
          break;
        }
      }
    }
    return text.length - hold;
  }

  /** How many secret values are known (for tests and `daemon status`). */
  get knownCount(): number {
    let n = 0;
    for (const list of this.sources.values()) n += list.length;
    return n;
  }

  /** The fields of a record with the values of secret-named fields replaced (at any depth, bounded). */
  fields(value: unknown, depth = 0): unknown {
    if (value === null || typeof value !== "object" || depth > 6) return value;
    if (Array.isArray(value)) return value.map((v) => this.fields(v, depth + 1));
    if (value instanceof Error) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      out[k] = SECRET_FIELD.test(k) && typeof v === "string" && v !== "" ? REDACTED : this.fields(v, depth + 1);
    }
    return out;
  }

  /** A text (a whole serialized log line) with every secret removed. */
  text(line: string): string {
    let out = line;
    for (const needle of this.needles) if (out.includes(needle)) out = out.split(needle).join(REDACTED);
    if (out.includes("@")) out = out.replace(PATH_TOKEN, `$1${REDACTED}`);
    if (out.includes("=")) out = out.replace(QUERY_TOKEN, `$1${REDACTED}`);
    if (out.includes("://")) out = out.replace(URL_PASSWORD, `$1${REDACTED}@`);
    out = out.replace(AUTH_SCHEME, `$1$2${REDACTED}`).replace(HEADER_LINE, `$1$2${REDACTED}`).replace(WS_PROTOCOL_TOKEN, `$1${REDACTED}`);
    if (out.includes(":")) out = out.replace(JSON_CREDENTIAL, `$1${REDACTED}`);
    if (out.includes("--")) out = out.replace(ARGV_CREDENTIAL, `$1${REDACTED}`);
    if (out.includes("sk-") || out.includes("gh") || out.includes("xox")) out = out.replace(SHAPED_KEY, REDACTED);
    return out;
  }
}

/**
 * The words that put what follows them where a credential is sent (the patterns above). A text
 * being streamed is redacted a piece at a time, and a credential cut between two pieces no
 * longer looks like one in either (`Bearer sk-12` | `34…`, `Bea` | `rer sk-1234`), so a
 * line is held from such a word, or from a tail that could be the start of one, until it is
 * complete.
 */
const CREDENTIAL_CONTEXT =
  /bearer|basic|authorization|cookie|token|api[-_]?key|apikey|[?&;](?:[\w.]*[-_])?key=|[?&;][\w.-]*sig(?:nature)?=|\bsk-|\bgh[pousr]_|github_pat_|\bxox[bpars]-|secret|passw(?:or)?d|\/gateway\//i;
const CREDENTIAL_WORDS = [
  "bearer",
  "basic",
  "authorization",
  "cookie",
  "token",
  "api_key",
  "api-key",
  "apikey",
  "key=",
  "sk-",
  "sig=",
  "signature=",
  "ghp_",
  "github_pat_",
  "xoxb-",
  "xoxp-",
  "secret",
  "password",
  "passwd",
  "/gateway/",
];

/** Where a streamed text can be cut without splitting a credential known only by its context. */
function credentialCut(text: string): number {
  const lineStart = text.lastIndexOf("\n") + 1;
  const line = text.slice(lineStart);
  const found = CREDENTIAL_CONTEXT.exec(line);
  if (found) return lineStart + wordStart(line, found.index);
  const lower = line.toLowerCase();
  let hold = 0;
  for (const word of CREDENTIAL_WORDS) {
    for (let n = Math.min(word.length - 1, lower.length); n > hold; n--) {
      if (lower.endsWith(word.slice(0, n))) {
        hold = n;
        break;
      }
    }
  }
  return hold ? lineStart + wordStart(line, line.length - hold) : text.length;
}

/** The start of the blank-delimited word around `at` (a query key's `?`, a path's `/` belong to the context). */
function wordStart(line: string, at: number): number {
  let i = at;
  while (i > 0 && !/\s/.test(line[i - 1]!)) i--;
  return i;
}

/** A config key that names the environment variable holding a credential: `api_key_env`, `token_env`, `webhook_secret_env`, … */
const CREDENTIAL_ENV_KEY = /(^|_)(api_?key|key|token|secret|password|passwd|credentials?)_env$/i;

/**
 * The secrets of a daemon's config and environment (`.env` included): the listeners' tokens,
 * every variable named like a secret, every variable the config names as a credential
 * (`providers.<name>.api_key_env`, `messaging.telegram.token_env`, … whatever the variable is
 * called), and the secret-named entries of a server's `env` map (`mcp_servers.<id>.env`).
 */
export function secretsOf(
  config: { gateway?: { token?: unknown; inspector_token?: unknown }; proxy?: { token?: unknown } } & Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): string[] {
  const out: string[] = [];
  for (const v of [config.gateway?.token, config.gateway?.inspector_token, config.proxy?.token]) if (typeof v === "string" && v) out.push(v);
  for (const [name, value] of Object.entries(env)) if (value && isSecretEnvName(name)) out.push(value);
  walkConfig(config, 0, (key, value, parentKey) => {
    if (CREDENTIAL_ENV_KEY.test(key) && typeof value === "string" && value) {
      const secret = env[value];
      if (secret) out.push(secret);
    } else if (parentKey === "env" && typeof value === "string" && value && isSecretEnvName(key)) out.push(value);
  });
  return out;
}

/** Every leaf of the config, with its key and its parent's key (bounded depth). */
function walkConfig(value: unknown, depth: number, visit: (key: string, value: unknown, parentKey: string) => void, parentKey = ""): void {
  if (value === null || typeof value !== "object" || depth > 6) return;
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (v !== null && typeof v === "object" && !Array.isArray(v)) walkConfig(v, depth + 1, visit, k);
    else visit(k, v, parentKey);
  }
}

/**
 * What reaches the daemon's stdout and stderr without the logger (an actor's `console.log`,
 * which a runner thread pipes to the daemon's own streams; a warning Node prints) lands in
 * `logs/daemon-stderr.log` or the journal: it passes the same redactor. A write error (the
 * reader gone) is dropped.
 */
export function redactStdio(redactor: Redactor, streams: NodeJS.WriteStream[] = [process.stdout, process.stderr]): void {
  for (const stream of streams) {
    // The reader gone (the relay of daemon-stderr.log killed): what is written there is lost,
    // the daemon goes on (an unhandled EPIPE would end it).
    stream.on("error", () => undefined);
    const write = stream.write.bind(stream) as (chunk: unknown, encoding?: unknown, cb?: unknown) => boolean;
    stream.write = ((chunk: unknown, encoding?: unknown, cb?: unknown) => {
      if (typeof chunk === "string") return write(redactor.text(chunk), encoding, cb);
      if (chunk instanceof Uint8Array) {
        const callback = typeof encoding === "function" ? encoding : cb;
        return write(redactor.text(Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength).toString("utf8")), "utf8", callback);
      }
      return write(chunk, encoding, cb);
    }) as typeof stream.write;
  }
}
