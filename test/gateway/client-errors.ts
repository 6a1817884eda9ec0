// Shared assertions for tests that drive the unmodified RivetKit client against our gateway
// (wire.test.ts in-process, client.test.ts against the daemon): what actor errors look like
// once they reach the client.
import * as assert from "uvu/assert";

/**
 * `handle` is a client handle of the test `counter` actor: its `fail` action throws a public
 * user error, which arrives whole; its `crash` action throws an internal one, which arrives as
 * a generic internal error without the secret detail.
 */
export async function assertActionErrorsReachClient(handle: any): Promise<void> {
  try {
    await handle.fail();
    assert.unreachable("should throw");
  } catch (error: any) {
    assert.is(error.group, "user");
    assert.is(error.code, "bad_thing");
    assert.is(error.message, "it failed");
    assert.equal(error.metadata, { why: "because", n: 3 });
  }
  try {
    await handle.crash();
    assert.unreachable("should throw");
  } catch (error: any) {
    assert.is(error.group, "internal");
    assert.not.match(String(error.message), /secret/);
  }
}
