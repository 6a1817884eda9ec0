/**
 * Provider credentials (docs/auth.md): an API key from the environment / `.env`, or an OAuth
 * sign-in stored in the profile's `auth.json`. OAuth wins where both exist. The credential is
 * resolved on every call: an access token that expires within `REFRESH_MARGIN_MS` is refreshed
 * first (refresh-token grant), and a call refused with 401 refreshes once more. Refreshes are
 * single-flight per provider: ten calls that find the token stale make one refresh.
 *
 * The OAuth protocol is openid-client's (docs/design.md "Why openid-client"), loaded on first
 * use: a daemon that never signs in never loads it. Tokens never leave this module except as the
 * value of an Authorization header; `status` reports method, expiry and scopes only.
 */
import type { AuthStatusEntry } from "../../shared/protocol/auth.js";
import { chmod, mkdir } from "node:fs/promises";
import { readFileSync, statSync } from "node:fs";
import { isIP } from "node:net";
import { dirname, join } from "node:path";
import { systemClock, type Clock } from "../../shared/clock.js";
import { AgentError } from "../../shared/errors.js";
import { readTextOrNull, writeFileAtomic } from "../store/atomic-file.js";
import { withFileLock } from "../store/file-lock.js";

/** Where a provider signs in: `providers.<name>.oauth_issuer`, `oauth_client_id`, `oauth_scopes`. */
export interface OAuthSettings {
  issuer: string;
  clientId: string;
  /** Space-separated; `offline_access` asks for a refresh token. */
  scopes: string;
}

interface StoredToken {
  method: "oauth";
  issuer: string;
  client_id: string;
  access_token: string;
  refresh_token: string | null;
  /** Milliseconds since the epoch, or null when the issuer gave no lifetime. */
  expires_at: number | null;
  scopes: string[];
  obtained_at: number;
}

interface AuthFile {
  version: 1;
  providers: Record<string, StoredToken>;
}

/** A provider's sign-in as `agent auth status` shows it (declared once, with the RPC). */
export type { AuthStatusEntry } from "../../shared/protocol/auth.js";

export interface DevicePrompt {
  verification_uri: string;
  verification_uri_complete: string | null;
  user_code: string;
  expires_in: number;
}

/** Refresh an access token this long before it expires. */
export const REFRESH_MARGIN_MS = 60_000;

const EMPTY: AuthFile = { version: 1, providers: {} };

type OidcModule = typeof import("openid-client");
let oidc: Promise<OidcModule> | null = null;
const loadOidc = (): Promise<OidcModule> => (oidc ??= import("openid-client"));

/** An issuer on this machine (plain http is accepted for it only): `localhost`, `127.0.0.0/8` as an IP (not a name starting with "127."), `::1`. */
export function isLoopbackUrl(url: string): boolean {
  try {
    const h = new URL(url).hostname.replace(/^\[|\]$/g, "");
    return h === "localhost" || h === "::1" || (isIP(h) === 4 && h.startsWith("127."));
  } catch {
    return false;
  }
}

export function signInAgain(provider: string, why: string): AgentError {
  return new AgentError("auth.sign_in_again", `the sign-in for ${provider} is no longer valid (${why}): sign in again: agent auth login ${provider}`, {
    provider,
  });
}

/** The credentials of one `auth.json` (one profile). One instance per file per process: see `credentialsFor`. */
export class CredentialStore {
  private cache: { key: string; data: AuthFile } | null = null;
  private readonly refreshing = new Map<string, Promise<StoredToken>>();
  private readonly configs = new Map<string, Promise<import("openid-client").Configuration>>();

  constructor(
    readonly file: string,
    private readonly clock: Clock = systemClock,
  ) {}

  /**
   * The stored file, re-read only when it changed on disk (a login by another process, a
   * logout): one stat per call, no read and no exception when nothing changed or it is absent.
   */
  private read(): AuthFile {
    const st = statSync(this.file, { throwIfNoEntry: false, bigint: false });
    if (!st) return EMPTY;
    const key = `${st.ino}:${st.size}:${st.mtimeMs}`;
    if (this.cache?.key === key) return this.cache.data;
    let data: AuthFile;
    try {
      const parsed = JSON.parse(readFileSync(this.file, "utf8")) as AuthFile;
      data = parsed && typeof parsed.providers === "object" && parsed.providers ? parsed : EMPTY;
    } catch {
      throw new AgentError("auth.bad_file", `${this.file} is not valid JSON; remove it and sign in again (agent auth login <provider>)`);
    }
    this.cache = { key, data };
    return data;
  }

  /**
   * Read, change, replace, holding `auth.json.lock` (daemon/store/file-lock.ts): one change at a
   * time across every thread and process of the home (`agent auth login` in the daemon, a
   * refresh in a kanban worker), so a refresh of one provider and a sign-in or sign-out of
   * another both land; without it each would write the file as it read it, and one would be
   * lost. The temp name is the write's own (uniqueTemp), and the file is re-read under the lock.
   */
  private async write(mutate: (data: AuthFile) => void): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    return withFileLock(this.file, () => this.writeNow(mutate), { what: this.file });
  }

  /** The file as it is on disk (never the cache), read while holding the lock. */
  private async readLocked(): Promise<AuthFile> {
    const current = (await readTextOrNull(this.file)) ?? "";
    return current ? (JSON.parse(current) as AuthFile) : { version: 1, providers: {} };
  }

  private async writeNow(mutate: (data: AuthFile) => void): Promise<void> {
    const data = await this.readLocked();
    mutate(data);
    const text = `${JSON.stringify(data, null, 2)}\n`;
    await writeFileAtomic(this.file, text, { mode: 0o600, fsync: true, uniqueTemp: true });
    // An existing file keeps its mode through the rename: make sure it is the owner's alone.
    await chmod(this.file, 0o600);
    this.cache = null;
  }

  /** True when the provider has an OAuth sign-in stored (it then wins over any API key). */
  hasOAuth(provider: string): boolean {
    return this.read().providers[provider]?.method === "oauth";
  }

  /**
   * The access token to send now: refreshed first when it expires within the margin. Throws
   * `auth.sign_in_again` when it cannot be refreshed.
   */
  async accessToken(provider: string): Promise<string> {
    const token = this.read().providers[provider];
    if (!token) throw new AgentError("auth.not_signed_in", `${provider} has no OAuth sign-in: agent auth login ${provider}`, { provider });
    if (token.expires_at === null || token.expires_at - this.clock.now() > REFRESH_MARGIN_MS) return token.access_token;
    return (await this.refresh(provider, token.access_token)).access_token;
  }

  /**
   * After the upstream refused `used` with 401: refresh once (unless another call already
   * replaced that token) and return the new token.
   */
  async afterUnauthorized(provider: string, used: string): Promise<string> {
    return (await this.refresh(provider, used)).access_token;
  }

  /** Single-flight: concurrent callers share one refresh per provider. */
  private refresh(provider: string, stale: string): Promise<StoredToken> {
    const inFlight = this.refreshing.get(provider);
    if (inFlight) return inFlight;
    const current = this.read().providers[provider];
    // Someone refreshed since `stale` was read: use theirs.
    if (current && current.access_token !== stale && (current.expires_at === null || current.expires_at - this.clock.now() > REFRESH_MARGIN_MS)) {
      return Promise.resolve(current);
    }
    const run = this.doRefresh(provider, stale).finally(() => this.refreshing.delete(provider));
    this.refreshing.set(provider, run);
    return run;
  }

  /**
   * Under auth.json.lock, like every change of the file: one refresh at a time across the
   * processes of the home (a second would present a refresh token the first just rotated, and an
   * issuer with reuse detection revokes the whole grant), and a sign-out or a new sign-in made
   * meanwhile is never overwritten (it waits for the lock, or the refresh reads it). The lock is
   * held across the issuer's answer, which may take 10 s at most (configFor).
   */
  private async doRefresh(provider: string, stale: string): Promise<StoredToken> {
    await mkdir(dirname(this.file), { recursive: true });
    return withFileLock(this.file, () => this.refreshLocked(provider, stale), { what: this.file });
  }

  private async refreshLocked(provider: string, stale: string): Promise<StoredToken> {
    const token = (await this.readLocked()).providers[provider];
    if (!token) throw new AgentError("auth.not_signed_in", `${provider} has no OAuth sign-in: agent auth login ${provider}`, { provider });
    // Another process refreshed (or signed in anew) while this one waited for the lock: use theirs.
    if (token.access_token !== stale && (token.expires_at === null || token.expires_at - this.clock.now() > REFRESH_MARGIN_MS)) return token;
    if (!token.refresh_token) throw signInAgain(provider, "the access token expired and the issuer gave no refresh token");
    const client = await loadOidc();
    const config = await this.configFor({ issuer: token.issuer, clientId: token.client_id, scopes: token.scopes.join(" ") });
    let response: Awaited<ReturnType<OidcModule["refreshTokenGrant"]>>;
    try {
      response = await client.refreshTokenGrant(config, token.refresh_token);
    } catch (error) {
      const e = error as { error?: string; status?: number; message?: string };
      if (e.error === "invalid_grant" || e.error === "invalid_client" || e.error === "unauthorized_client")
        throw signInAgain(provider, `the issuer refused the refresh token: ${e.error}`);
      throw new AgentError("auth.refresh_failed", `refreshing the sign-in for ${provider} at ${token.issuer} failed: ${e.message ?? String(error)}`, {
        provider,
      });
    }
    const next = this.stored(token, response);
    await this.writeNow((data) => {
      data.providers[provider] = next;
    });
    return next;
  }

  private stored(
    base: { issuer: string; client_id: string; refresh_token?: string | null; scopes?: string[] },
    response: { access_token: string; refresh_token?: string; scope?: string; expiresIn(): number | undefined },
  ): StoredToken {
    const now = this.clock.now();
    const expiresIn = response.expiresIn();
    return {
      method: "oauth",
      issuer: base.issuer,
      client_id: base.client_id,
      access_token: response.access_token,
      // A rotating issuer sends a new refresh token; otherwise the old one stays valid.
      refresh_token: response.refresh_token ?? base.refresh_token ?? null,
      expires_at: expiresIn === undefined ? null : now + expiresIn * 1000,
      scopes: response.scope ? response.scope.split(" ").filter(Boolean) : (base.scopes ?? []),
      obtained_at: now,
    };
  }

  private configFor(settings: OAuthSettings): Promise<import("openid-client").Configuration> {
    const id = `${settings.issuer}\0${settings.clientId}`;
    let config = this.configs.get(id);
    if (!config) {
      config = (async () => {
        const client = await loadOidc();
        // Plain http is accepted for an issuer on this machine only (a local or test server).
        const execute = isLoopbackUrl(settings.issuer) ? [client.allowInsecureRequests] : [];
        try {
          // 10 s per request to the issuer: a refresh holds auth.json.lock across its answer, and
          // other processes of the home wait for that lock for 15 s at most.
          return await client.discovery(new URL(settings.issuer), settings.clientId, undefined, client.None(), { execute, timeout: 10 });
        } catch (error) {
          throw new AgentError("auth.issuer_unreachable", `the OAuth issuer ${settings.issuer} could not be discovered: ${(error as Error).message}`);
        }
      })();
      config.catch(() => this.configs.delete(id));
      this.configs.set(id, config);
    }
    return config;
  }

  /**
   * RFC 8628 device authorization grant: `prompt` gets the URL and code to show, then this waits
   * until the user approves (or the code expires, or `signal` aborts) and stores the tokens.
   */
  async login(provider: string, settings: OAuthSettings, prompt: (p: DevicePrompt) => void, signal?: AbortSignal): Promise<AuthStatusEntry> {
    const client = await loadOidc();
    const config = await this.configFor(settings);
    let device: Awaited<ReturnType<OidcModule["initiateDeviceAuthorization"]>>;
    try {
      device = await client.initiateDeviceAuthorization(config, { scope: settings.scopes });
    } catch (error) {
      const e = error as { error?: string; message?: string };
      throw new AgentError("auth.login_failed", `the issuer ${settings.issuer} refused the device authorization request: ${e.error ?? e.message}`, {
        provider,
      });
    }
    prompt({
      verification_uri: device.verification_uri,
      verification_uri_complete: device.verification_uri_complete ?? null,
      user_code: device.user_code,
      expires_in: device.expires_in,
    });
    let response: Awaited<ReturnType<OidcModule["pollDeviceAuthorizationGrant"]>>;
    try {
      response = await client.pollDeviceAuthorizationGrant(config, device, undefined, { signal });
    } catch (error) {
      if (signal?.aborted) throw new AgentError("action.cancelled", "sign-in cancelled");
      const e = error as { error?: string; message?: string };
      if (e.error === "expired_token")
        throw new AgentError("auth.login_failed", `the code expired before it was approved: run agent auth login ${provider} again`);
      if (e.error === "access_denied") throw new AgentError("auth.login_failed", "the sign-in was denied at the issuer");
      throw new AgentError("auth.login_failed", `sign-in failed: ${e.error ?? e.message}`, { provider });
    }
    const token = this.stored({ issuer: settings.issuer, client_id: settings.clientId, scopes: settings.scopes.split(" ").filter(Boolean) }, response);
    await this.write((data) => {
      data.providers[provider] = token;
    });
    return this.entry(provider, token, null);
  }

  /** Forget the provider's sign-in. True when there was one. */
  async logout(provider: string): Promise<boolean> {
    if (!this.read().providers[provider]) return false;
    await this.write((data) => {
      delete data.providers[provider];
    });
    return true;
  }

  /** Status of a provider: method, expiry and scopes; never a token. */
  status(provider: string, apiKey: { env: string | null; present: boolean }): AuthStatusEntry {
    const token = this.read().providers[provider];
    if (token) return this.entry(provider, token, apiKey.env);
    return {
      provider,
      method: apiKey.present ? "api_key" : "none",
      issuer: null,
      expires_at: null,
      expired: false,
      refreshable: false,
      scopes: [],
      api_key_env: apiKey.env,
    };
  }

  /** Every provider with a stored sign-in. */
  signedIn(): string[] {
    return Object.keys(this.read().providers);
  }

  private entry(provider: string, token: StoredToken, apiKeyEnv: string | null): AuthStatusEntry {
    return {
      provider,
      method: "oauth",
      issuer: token.issuer,
      expires_at: token.expires_at === null ? null : new Date(token.expires_at).toISOString(),
      expired: token.expires_at !== null && token.expires_at <= this.clock.now(),
      refreshable: Boolean(token.refresh_token),
      scopes: token.scopes,
      api_key_env: apiKeyEnv,
    };
  }
}

const stores = new Map<string, CredentialStore>();

/** The one store of a profile directory's `auth.json` in this process (single-flight needs one). */
export function credentialsFor(profileDir: string): CredentialStore {
  const file = join(profileDir, "auth.json");
  let store = stores.get(file);
  if (!store) {
    store = new CredentialStore(file);
    stores.set(file, store);
  }
  return store;
}

/** What a model call needs: the header value now, and a second chance after a 401. */
export interface CredentialSource {
  method: "oauth" | "api_key";
  token(): Promise<string>;
  /** The token to retry with after `used` got 401, or null when a retry cannot help (an API key). */
  afterUnauthorized(used: string): Promise<string | null>;
}

/** A plain API key (or a local server's placeholder). */
export function apiKeyCredential(apiKey: string): CredentialSource {
  return { method: "api_key", token: async () => apiKey, afterUnauthorized: async () => null };
}

/**
 * The credential of a provider: its OAuth sign-in when one is stored, else its API key. Decided
 * at each use, so a sign-in or sign-out applies to the next call of an already resolved provider.
 */
export function credentialSource(profileDir: string, provider: string, apiKey: string): CredentialSource {
  const store = credentialsFor(profileDir);
  return {
    get method() {
      return store.hasOAuth(provider) ? "oauth" : "api_key";
    },
    token: () => (store.hasOAuth(provider) ? store.accessToken(provider) : Promise.resolve(apiKey)),
    afterUnauthorized: (used) => (store.hasOAuth(provider) ? store.afterUnauthorized(provider, used) : Promise.resolve(null)),
  };
}

/** `providers.<name>.oauth_*` from a provider entry, or null when the provider has no issuer. */
export function oauthSettings(entry: { oauth_issuer?: string; oauth_client_id?: string; oauth_scopes?: string } | undefined): OAuthSettings | null {
  if (!entry?.oauth_issuer || !entry.oauth_client_id) return null;
  return { issuer: entry.oauth_issuer, clientId: entry.oauth_client_id, scopes: entry.oauth_scopes || "openid offline_access" };
}
