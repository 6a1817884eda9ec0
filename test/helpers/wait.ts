/** Falsy values `waitFor` keeps polling on. */
type Falsy = null | undefined | false | 0 | "";

/**
 * The one way tests wait: poll `check` until it returns a truthy value (which is returned), or
 * fail after `timeoutMs` with an error naming `what` was awaited. `what` may be a function, so the
 * message can show state at the moment of failure (the output so far, say). A `check` that
 * throws is retried like a falsy answer (a daemon still starting, a file half-written); if it
 * never succeeds, its last error is part of the timeout message.
 *
 * Tests wait for an event (an output line, a file, a log entry, a process exit) through this,
 * never for a fixed time: the poll interval only bounds how late the event is seen.
 */
export async function waitFor<T>(what: string | (() => string), check: () => T | Promise<T>, timeoutMs = 10_000): Promise<Exclude<T, Falsy>> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (let interval = 5; ; interval = Math.min(interval * 2, 50)) {
    try {
      const value = await check();
      if (value) return value as Exclude<T, Falsy>;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const name = typeof what === "function" ? what() : what;
      const cause = lastError === undefined ? "" : `; last error: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${name}${cause}`);
    }
    await new Promise((resolve) => setTimeout(resolve, interval));
  }
}
