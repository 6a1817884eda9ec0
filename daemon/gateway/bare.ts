/**
 * A minimal BARE codec for the few HTTP message types the RivetKit client exchanges with the
 * gateway (client protocol, schema versions 1–3). Every message is prefixed by its schema
 * version as a 2-byte little-endian integer. `data` fields carry CBOR.
 *
 *   HttpActionRequest    { args: data }                                         v1, v2, v3
 *   HttpActionResponse   { output: data }                                       v1, v2, v3
 *   HttpQueueSendRequest { body: data, name: optional<str>, wait: optional<bool>,
 *                          timeout: optional<u64> }                             v3 only
 *   HttpQueueSendResponse{ status: str, response: optional<data> }              v3 only
 *   HttpResponseError    { group: str, code: str, message: str, metadata: optional<data> }
 */
import { AgentError } from "../../shared/errors.js";

/** The version the 2.2.1 client sends and the one we answer with. */
export const BARE_CURRENT_VERSION = 3;

/** A body that is not a valid BARE message: a 400 `request.invalid`. */
export class BareError extends AgentError {
  constructor(detail: string) {
    super("request.invalid", `invalid BARE body: ${detail}`);
    this.name = "BareError";
  }
}

const utf8Decoder = new TextDecoder("utf-8", { fatal: true });

export class BareReader {
  offset = 0;
  constructor(readonly bytes: Uint8Array) {}

  uint(): number {
    let result = 0;
    let shift = 1;
    for (let i = 0; i < 10; i++) {
      if (this.offset >= this.bytes.length) throw new BareError("unexpected end of input");
      const byte = this.bytes[this.offset++];
      result += (byte & 0x7f) * shift;
      if ((byte & 0x80) === 0) {
        if (i > 0 && byte === 0) throw new BareError("non-canonical varint");
        if (!Number.isSafeInteger(result)) throw new BareError("varint too large");
        return result;
      }
      shift *= 128;
    }
    throw new BareError("varint too long");
  }

  data(): Uint8Array {
    const length = this.uint();
    if (this.offset + length > this.bytes.length) throw new BareError("data length exceeds input");
    const out = this.bytes.subarray(this.offset, this.offset + length);
    this.offset += length;
    return out;
  }

  string(): string {
    return utf8Decoder.decode(this.data());
  }

  bool(): boolean {
    if (this.offset >= this.bytes.length) throw new BareError("unexpected end of input");
    const byte = this.bytes[this.offset++];
    if (byte > 1) throw new BareError("invalid bool");
    return byte === 1;
  }

  u64(): bigint {
    if (this.offset + 8 > this.bytes.length) throw new BareError("unexpected end of input");
    const view = new DataView(this.bytes.buffer, this.bytes.byteOffset + this.offset, 8);
    this.offset += 8;
    return view.getBigUint64(0, true);
  }

  optional<T>(read: () => T): T | null {
    return this.bool() ? read() : null;
  }

  end(): void {
    if (this.offset !== this.bytes.length) throw new BareError("trailing bytes");
  }
}

export class BareWriter {
  private buf: Uint8Array;
  private offset = 2;

  constructor(version: number, initial = 64) {
    this.buf = new Uint8Array(initial);
    this.buf[0] = version & 0xff;
    this.buf[1] = (version >> 8) & 0xff;
  }

  private reserve(n: number): void {
    if (this.offset + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.offset + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.offset));
    this.buf = next;
  }

  uint(value: number): this {
    this.reserve(10);
    let v = value;
    while (v >= 0x80) {
      this.buf[this.offset++] = (v % 128) | 0x80;
      v = Math.floor(v / 128);
    }
    this.buf[this.offset++] = v;
    return this;
  }

  data(bytes: Uint8Array): this {
    this.uint(bytes.length);
    this.reserve(bytes.length);
    this.buf.set(bytes, this.offset);
    this.offset += bytes.length;
    return this;
  }

  string(value: string): this {
    return this.data(Buffer.from(value, "utf8"));
  }

  bool(value: boolean): this {
    this.reserve(1);
    this.buf[this.offset++] = value ? 1 : 0;
    return this;
  }

  optional<T>(value: T | null | undefined, write: (v: T) => void): this {
    if (value === null || value === undefined) return this.bool(false);
    this.bool(true);
    write(value);
    return this;
  }

  u64(value: bigint): this {
    this.reserve(8);
    new DataView(this.buf.buffer, this.buf.byteOffset + this.offset, 8).setBigUint64(0, value, true);
    this.offset += 8;
    return this;
  }

  finish(): Uint8Array {
    return this.buf.subarray(0, this.offset);
  }
}

/** Splits the version prefix off a BARE body. */
export function bareVersion(body: Uint8Array): { version: number; reader: BareReader } {
  if (body.length < 2) throw new BareError("payload too short for embedded version");
  const version = body[0] | (body[1] << 8);
  return { version, reader: new BareReader(body.subarray(2)) };
}

export function decodeActionRequest(body: Uint8Array): Uint8Array {
  const { version, reader } = bareVersion(body);
  if (version < 1 || version > 3) throw new BareError(`unsupported version ${version}`);
  const args = reader.data();
  reader.end();
  return args;
}

export function encodeActionResponse(output: Uint8Array, version = BARE_CURRENT_VERSION): Uint8Array {
  return new BareWriter(version, output.length + 16).data(output).finish();
}

export interface BareQueueSendRequest {
  body: Uint8Array;
  name: string | null;
  wait: boolean | null;
  timeout: bigint | null;
}

export function decodeQueueSendRequest(body: Uint8Array): BareQueueSendRequest {
  const { version, reader } = bareVersion(body);
  if (version !== 3) throw new BareError(`HttpQueueSendRequest exists in version 3 only, got ${version}`);
  const out = {
    body: reader.data(),
    name: reader.optional(() => reader.string()),
    wait: reader.optional(() => reader.bool()),
    timeout: reader.optional(() => reader.u64()),
  };
  reader.end();
  return out;
}

export function encodeQueueSendResponse(status: string, response: Uint8Array | null): Uint8Array {
  const w = new BareWriter(3);
  w.string(status);
  w.optional(response, (r) => w.data(r));
  return w.finish();
}

export function encodeResponseError(group: string, code: string, message: string, metadata: Uint8Array | null, version = BARE_CURRENT_VERSION): Uint8Array {
  const w = new BareWriter(version);
  w.string(group).string(code).string(message);
  w.optional(metadata, (m) => w.data(m));
  return w.finish();
}

/** Decoder for the error response, used by tests. */
export function decodeResponseError(body: Uint8Array): { group: string; code: string; message: string; metadata: Uint8Array | null } {
  const { reader } = bareVersion(body);
  const out = { group: reader.string(), code: reader.string(), message: reader.string(), metadata: reader.optional(() => reader.data()) };
  reader.end();
  return out;
}
