// A real OAuth authorization server for the sign-in tests: oidc-provider on 127.0.0.1 with the
// device grant and refresh tokens, one public client. `approve` does what a user does in the
// browser (enter the code, sign in, consent) directly on the provider's own models.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import Provider from "oidc-provider";

export const CLIENT_ID = "agent-cli";

export interface Issuer {
  url: string;
  /** Seconds an access token lives (changeable between calls). */
  accessTtl: { seconds: number };
  /** Refresh-token grants the issuer answered successfully. */
  refreshes(): number;
  /** Approve the device code a user typed (the browser part of the flow). */
  approve(userCode: string): Promise<void>;
  /** Revoke every refresh token issued so far (a user removing the app's access). */
  revokeAll(): Promise<void>;
  close(): Promise<void>;
}

/** `rotateRefreshToken`: each refresh consumes its refresh token; a consumed one used again revokes the grant (reuse detection). */
export async function startIssuer(options: { rotateRefreshToken?: boolean } = {}): Promise<Issuer> {
  const accessTtl = { seconds: 3600 };
  const refreshTokens = new Set<string>();
  let refreshes = 0;
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const provider = new Provider(url, {
    clients: [
      {
        client_id: CLIENT_ID,
        token_endpoint_auth_method: "none",
        grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"],
        response_types: [],
        redirect_uris: [],
      },
    ],
    features: { deviceFlow: { enabled: true }, revocation: { enabled: true }, devInteractions: { enabled: false } },
    scopes: ["openid", "offline_access", "models"],
    ttl: {
      AccessToken: () => accessTtl.seconds,
      DeviceCode: 600,
      RefreshToken: 86_400,
      Grant: 86_400,
    },
    issueRefreshToken: async () => true,
    rotateRefreshToken: options.rotateRefreshToken ?? false,
    findAccount: async (_ctx: unknown, id: string) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  });
  // oidc-provider sends no polling interval, so clients wait the RFC's default 5 s between
  // polls; a 1 s interval keeps the sign-in tests short (the client honours what it is sent).
  provider.use(async (ctx: { path: string; body?: unknown }, next: () => Promise<void>) => {
    await next();
    if (ctx.path === "/device/auth" && ctx.body && typeof ctx.body === "object") (ctx.body as { interval?: number }).interval = 1;
  });
  provider.on("grant.success", (ctx: { oidc: { params?: { grant_type?: string } } }) => {
    if (ctx.oidc.params?.grant_type === "refresh_token") refreshes++;
  });
  provider.on("refresh_token.saved", (token: { jti: string }) => refreshTokens.add(token.jti));
  // oidc-provider logs dev-key warnings to the console: keep the test output clean.
  server.on("request", provider.callback());
  return {
    url,
    accessTtl,
    refreshes: () => refreshes,
    async approve(userCode: string) {
      const normalized = userCode.replace(/[^A-Za-z0-9]/g, "").toUpperCase();
      const code = await provider.DeviceCode.findByUserCode(normalized, { ignoreExpiration: false });
      if (!code) throw new Error(`no device code ${userCode}`);
      const grant = new provider.Grant({ accountId: "user-1", clientId: code.clientId });
      grant.addOIDCScope(code.scope ?? "openid offline_access");
      code.grantId = await grant.save();
      code.accountId = "user-1";
      code.authTime = Math.floor(Date.now() / 1000);
      await code.save();
    },
    async revokeAll() {
      for (const jti of refreshTokens) {
        const token = await provider.RefreshToken.find(jti);
        await token?.destroy();
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
