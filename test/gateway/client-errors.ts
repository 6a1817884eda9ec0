// Shared assertions for tests that drive the unmodified RivetKit client against our gateway
// (wire.test.ts in-process, client.test.ts against the daemon): what actor errors look like
// once they reach the client.
import * as assert from "uvu/assert";

/** `handle`'s `fail` action (test `counter` actor) throws a public user error, which arrives whole. */
export async function assertUserErrorReachesClient(handle: any): Promise<void> {
  try {
    await handle.fail();
    assert.unreachable("should throw");
  } catch (error: any) {
    assert.is(error.group, "user");
    assert.is(error.code, "bad_thing");
    assert.is(error.message, "it failed");
    assert.equal(error.metadata, { why: "because", n: 3 });
  }
}

/** `handle`'s `crash` action throws an internal error, which arrives as a generic internal error without the secret detail. */
export async function assertInternalErrorHidesDetail(handle: any): Promise<void> {
  try {
    await handle.crash();
    assert.unreachable("should throw");
  } catch (error: any) {
    assert.is(error.group, "internal");
    assert.not.match(String(error.message), /secret/);
  }
}
