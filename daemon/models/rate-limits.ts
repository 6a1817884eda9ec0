import type { QuotaBucket } from "../../shared/protocol/chat.js";

/**
 * The last `x-ratelimit-*` headers seen per (provider, model, bucket type), for `/gquota`.
 * Header names vary by vendor (`x-ratelimit-limit-requests`, `...-remaining-input-tokens`,
 * `...-reset-tokens`), so the bucket type is whatever follows limit/remaining/reset.
 */
export class RateLimitBook {
  private readonly buckets = new Map<string, QuotaBucket>();

  record(provider: string, model: string, headers: Headers | null | undefined): void {
    if (!headers) return;
    const at = Date.now();
    headers.forEach((value, rawName) => {
      const m = /^x-ratelimit-(limit|remaining|reset)-(.+)$/.exec(rawName.toLowerCase());
      if (!m) return;
      const [, field, type] = m as unknown as [string, "limit" | "remaining" | "reset", string];
      const id = `${provider}\0${model}\0${type}`;
      const bucket = this.buckets.get(id) ?? { provider, model, type, limit: null, remaining: null, reset: null, at };
      bucket.at = at;
      if (field === "reset") bucket.reset = value;
      else {
        const n = Number(value);
        bucket[field] = Number.isFinite(n) ? n : null;
      }
      this.buckets.set(id, bucket);
    });
  }

  list(): QuotaBucket[] {
    return [...this.buckets.values()].sort((a, b) => a.model.localeCompare(b.model) || a.type.localeCompare(b.type));
  }
}
