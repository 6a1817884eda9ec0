/**
 * The entries of `gateway.cors_origins` and `gateway.allowed_hosts` (and of later listeners'
 * lists): checked when the config is validated and normalized where they are applied
 * (daemon/http/access.ts).
 */

/** Normalizes a configured origin (`https://Example.com:443/` → `https://example.com`); throws on anything else. */
export function normalizeOrigin(entry: string): string {
  if (entry === "*") return "*";
  let url: URL;
  try {
    url = new URL(entry);
  } catch {
    throw new Error(`${JSON.stringify(entry)} is not an origin (scheme://host[:port], or *)`);
  }
  if (
    (url.protocol !== "http:" && url.protocol !== "https:") ||
    url.username ||
    url.password ||
    (url.pathname !== "/" && url.pathname !== "") ||
    url.search ||
    url.hash
  ) {
    throw new Error(`${JSON.stringify(entry)} is not an origin (http(s)://host[:port] without a path, or *)`);
  }
  return url.origin;
}

/** Checks a configured host entry (`name` or `name:port`, IPv6 in brackets). */
export function normalizeHostEntry(entry: string): string {
  const h = entry.trim().toLowerCase();
  if (!/^(\[[0-9a-f:.]+\]|[a-z0-9._-]+)(:\d{1,5})?$/.test(h)) throw new Error(`${JSON.stringify(entry)} is not a host name (name or name:port)`);
  return h;
}
