/**
 * `AgentError.code` is typed from the registry (shared/error-codes.ts): a code that is not listed
 * fails to compile. The `@ts-expect-error` lines are checked by `npm run typecheck` (tsc reports an
 * unused one), so this file fails the typecheck if AgentError ever takes any string again.
 */
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentError } from "../../shared/errors.js";
import { type ErrorCode, isRegisteredCode } from "../../shared/error-codes.js";

test("a listed code and an actor's user.<code> compile; a mistyped one does not", () => {
  const listed = new AgentError("kanban.task_not_found", "no task");
  const user = new AgentError("user.out_of_stock", "none left");
  // @ts-expect-error: not a registered code (a typo of kanban.task_not_found)
  const typo = new AgentError("kanban.task_notfound", "no task");
  // @ts-expect-error: no group
  const bare: ErrorCode = "not_found";
  assert.ok(isRegisteredCode(listed.code));
  assert.is(user.group, "user");
  assert.not.ok(isRegisteredCode(typo.code));
  assert.not.ok(isRegisteredCode(bare));
});

test("a code received from another process is taken as it came", () => {
  const e = AgentError.received("actor.some_future_code", "from a newer daemon", { a: 1 });
  assert.instance(e, AgentError);
  assert.is(e.code, "actor.some_future_code");
  assert.equal(e.metadata, { a: 1 });
});

test.run();
