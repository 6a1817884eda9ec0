/**
 * The runner's memory limit covers what V8's heap limit does not: memory outside the heap
 * (Buffers, ArrayBuffers, typed arrays), which a worker thread's `resourceLimits` leaves
 * unbounded (design notes, "The runner's memory limit"). Runs inside the worker, before the
 * user's module is imported.
 *
 * - Every allocator the actor's code reaches for (`Buffer.alloc*`, `new ArrayBuffer`,
 *   `new SharedArrayBuffer`, the typed-array constructors) is checked before it allocates: an
 *   allocation of 1 MB or more, or after 16 MB of smaller ones, measures the thread's memory
 *   (`process.memoryUsage()`: in a worker, heap and external are the thread's own), and one that
 *   would take heap + external past the limit ends the runner as out of memory, even inside a
 *   synchronous loop that never returns to the event loop.
 * - Every heartbeat measures too (memory that came another way: a file read, zlib, …).
 *
 * Ending the runner: the flag in the shared array tells the daemon why (module-runner.ts), and
 * the thread exits; the actor whose code ran is crashed `out of memory` under its crash policy.
 */
import { SHARED } from "./protocol.js";

const MB = 1024 * 1024;
/** An allocation this large is checked at once. */
const CHECK_AT = MB;
/** Smaller allocations are checked after this many bytes of them. */
const CHECK_EVERY = 16 * MB;

export function installMemoryGuard(shared: Int32Array, limitMb: number, exit: (code: number) => never): { check(): void } {
  const limit = limitMb * MB;
  let since = 0;
  const used = () => {
    const m = process.memoryUsage();
    return m.heapUsed + m.external;
  };
  const outOfMemory = (bytes: number): never => {
    Atomics.store(shared, SHARED.oom, Math.max(1, Math.round(bytes / MB)));
    return exit(1);
  };
  const guard = (bytes: number) => {
    if (!(bytes > 0)) return;
    since += bytes;
    if (bytes < CHECK_AT && since < CHECK_EVERY) return;
    since = 0;
    const after = used() + bytes;
    if (after > limit) outOfMemory(after);
  };

  const B = Buffer as unknown as Record<string, (...a: unknown[]) => unknown>;
  for (const name of ["alloc", "allocUnsafe", "allocUnsafeSlow"]) {
    const original = B[name];
    B[name] = function (this: unknown, size: unknown, ...rest: unknown[]) {
      if (typeof size === "number") guard(size);
      return original.call(this, size, ...rest);
    };
  }
  const g = globalThis as unknown as Record<string, unknown>;
  /**
   * A constructor replaced by a function that checks first, sharing the original's prototype
   * (so `instanceof`, `.constructor`, species and natively made arrays all agree) and calling it
   * directly (a Proxy's construct trap costs ~3-40x per allocation; this costs next to nothing).
   */
  const wrap = (name: string, bytesOf: (a: unknown, perElement: number) => number) => {
    const original = g[name] as (new (...a: unknown[]) => object) & { BYTES_PER_ELEMENT?: number; prototype: object };
    if (typeof original !== "function") return;
    const perElement = original.BYTES_PER_ELEMENT ?? 1;
    const wrapper = function (this: unknown, ...args: unknown[]) {
      if (new.target === undefined) throw new TypeError(`Constructor ${name} requires 'new'`);
      guard(bytesOf(args[0], perElement));
      if ((new.target as unknown) === wrapper) {
        const n = args.length;
        return n === 0 ? new original() : n === 1 ? new original(args[0]) : n === 2 ? new original(args[0], args[1]) : new original(args[0], args[1], args[2]);
      }
      // A subclass of it (`class X extends Uint8Array`).
      return Reflect.construct(original, args, new.target);
    } as unknown as { prototype: object; new (...a: unknown[]): object };
    Object.defineProperty(wrapper, "name", { value: name });
    Object.defineProperty(wrapper, "length", { value: original.length });
    Object.setPrototypeOf(wrapper, original);
    Object.defineProperty(wrapper, "prototype", { value: original.prototype });
    Object.defineProperty(original.prototype, "constructor", { value: wrapper, writable: true, configurable: true, enumerable: false });
    g[name] = wrapper;
  };
  const lengthArg = (a: unknown) => (typeof a === "number" ? a : 0);
  wrap("ArrayBuffer", lengthArg);
  wrap("SharedArrayBuffer", lengthArg);
  for (const name of [
    "Int8Array",
    "Uint8Array",
    "Uint8ClampedArray",
    "Int16Array",
    "Uint16Array",
    "Int32Array",
    "Uint32Array",
    "Float32Array",
    "Float64Array",
    "BigInt64Array",
    "BigUint64Array",
  ]) {
    wrap(name, (a, perElement) => {
      // A length, or an array-like to copy (a view or a buffer shares or copies what is already counted).
      const n =
        typeof a === "number"
          ? a
          : a && typeof a === "object" && !ArrayBuffer.isView(a) && typeof (a as { length?: unknown }).length === "number"
            ? (a as { length: number }).length
            : 0;
      return n * perElement;
    });
  }

  return {
    /** Called each heartbeat: memory that came in another way. */
    check() {
      const now = used();
      Atomics.store(shared, SHARED.memoryMb, Math.round(now / MB));
      if (now > limit) outOfMemory(now);
    },
  };
}
