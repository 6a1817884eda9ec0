import { z } from "zod";
import { rpc } from "./define.js";

/** Provider sign-in (docs/auth.md): status never carries a token. */

export interface AuthStatusEntry {
  provider: string;
  method: "oauth" | "api_key" | "none";
  issuer: string | null;
  expires_at: string | null;
  expired: boolean;
  refreshable: boolean;
  scopes: string[];
  /** The variable an API key is read from (its name, never its value). */
  api_key_env: string | null;
}

/** Pushed to the caller of `auth.login` while it waits: what the user must open and type. */
export const AUTH_DEVICE_TOPIC = "auth.device";
export interface AuthDevicePrompt {
  verification_uri: string;
  verification_uri_complete: string | null;
  user_code: string;
  expires_in: number;
}

const provider = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "a provider name is letters, digits, _ and -");

export const authMethods = {
  /** The device grant: notifies `auth.device` with the URL and code, resolves once the user approved. */
  "auth.login": rpc<{ profile: string; file: string; status: AuthStatusEntry }>()(() => z.object({ provider }).strict()),
  "auth.status": rpc<{ profile: string; file: string; providers: AuthStatusEntry[] }>()(() => z.object({ provider: provider.optional() }).strict()),
  "auth.logout": rpc<{ profile: string; provider: string; removed: boolean }>()(() => z.object({ provider }).strict()),
};
