import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { ApprovalService } from "../../daemon/approvals/approval-service.js";
import { CONFIG_DEFAULTS } from "../../shared/config/defaults.js";

// Two answers to one question (two terminals, or `agent approvals answer` next to the chat).

test("a second answer while the first is being remembered is refused, and the first one decides", async () => {
  const home = mkdtempSync(join(tmpdir(), "appr-race-"));
  try {
    const service = new ApprovalService({ home, configFor: async () => ({ current: () => CONFIG_DEFAULTS }) });
    const decided = service.decide(
      { kind: "command", tool: "terminal", summary: "rm -rf ./build", details: { command: "rm -rf ./build", cwd: home } },
      { sessionId: "s1", turnId: "t1", profile: "default", workspace: home, interactive: () => true },
    );
    let id = "";
    for (let i = 0; i < 100 && !id; i++) {
      await new Promise((r) => setTimeout(r, 5));
      id = service.pending("s1")[0]?.id ?? "";
    }
    assert.ok(id, "the question is waiting");
    const [always, once] = await Promise.allSettled([service.answer(id, "always"), service.answer(id, "once")]);
    assert.is(always.status, "fulfilled");
    assert.equal(always.status === "fulfilled" && always.value, { allowed: true });
    assert.is(once.status, "rejected");
    assert.match(String(once.status === "rejected" && once.reason), /no approval question .* is waiting/);
    const decision = await decided;
    assert.is(decision.choice, "always");
    assert.is((await service.remembered("default")).length, 1);
    const again = await service.answer(id, "deny").then(
      () => "answered",
      (e: Error) => e.message,
    );
    assert.match(again, /is waiting/, "answering twice is refused");
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
});

test.run();
