// The dashboard's one-time sign-in codes and sessions, on a clock the test moves.
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ManualClock } from "../../shared/clock.js";
import { CODE_TTL_MS, DashboardSignIn, SESSION_TTL_MS } from "../../daemon/dashboard/sign-in-codes.js";

test("a code signs in once; the second use is refused", () => {
  const s = new DashboardSignIn(null, new ManualClock(1_000));
  const { code } = s.mintCode();
  const token = s.redeem(code);
  assert.type(token, "string");
  assert.ok(s.valid(token!));
  assert.is(s.redeem(code), null);
  assert.is(s.redeem("not-a-code"), null);
});

test("a code expires five minutes after it was minted (the daemon's clock)", () => {
  const clock = new ManualClock(0);
  const s = new DashboardSignIn(null, clock);
  const a = s.mintCode();
  const b = s.mintCode();
  assert.is(a.expiresAt, CODE_TTL_MS);
  clock.advance(CODE_TTL_MS - 1);
  assert.type(s.redeem(a.code), "string", "just in time");
  clock.advance(1);
  assert.is(s.redeem(b.code), null, "at five minutes it no longer works");
});

test("sessions survive a restart (digests on disk, 0600, no token in the file) and expire", async () => {
  const dir = mkdtempSync(join(tmpdir(), "dsi-"));
  try {
    const file = join(dir, "dashboard", "sessions.json");
    const clock = new ManualClock(0);
    const s = new DashboardSignIn(file, clock);
    const token = s.redeem(s.mintCode().code)!;
    await s.flushed();
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.not.ok(readFileSync(file, "utf8").includes(token), "only a digest is stored");
    const again = new DashboardSignIn(file, clock);
    assert.ok(again.valid(token), "still signed in after a restart");
    again.revoke(token);
    assert.not.ok(again.valid(token), "signed out");
    const later = s.redeem(s.mintCode().code)!;
    clock.advance(SESSION_TTL_MS);
    assert.not.ok(s.valid(later), "a session ends after its lifetime");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test.run();
