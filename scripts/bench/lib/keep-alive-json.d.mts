export interface KeepAliveJson {
  (base: string, method: string, path: string, body?: unknown): Promise<{ status: number; json: any }>;
  close(): void;
}
export function keepAliveJson(maxSockets: number): KeepAliveJson;
