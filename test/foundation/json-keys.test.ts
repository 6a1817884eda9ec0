// The CLI's key conversion (shared/json-keys.ts): camelCase keys become snake_case, names
// someone chose and user data stay as they are.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { snakeKeys } from "../../shared/json-keys.js";

test("camelCase keys become snake_case, at every depth and in lists", () => {
  assert.equal(snakeKeys({ uptimeMs: 1, list: [{ loadedAt: 2, httpURLThing: 3 }], nested: { nextRunAt: 4 } }), {
    uptime_ms: 1,
    list: [{ loaded_at: 2, http_url_thing: 3 }],
    nested: { next_run_at: 4 },
  });
});

test("names someone chose and user data keep their keys", () => {
  assert.equal(snakeKeys({ PATH: 1, OPENAI_API_KEY: 2, Counter: 3, "gateway.port": 4, already_snake: 5 }), {
    PATH: 1,
    OPENAI_API_KEY: 2,
    Counter: 3,
    "gateway.port": 4,
    already_snake: 5,
  });
  const state = { myCount: 1, deep: { someKey: 2 } };
  assert.equal(snakeKeys({ state, output: { resultValue: 1 }, data: { fromStatus: "x" } }), { state, output: { resultValue: 1 }, data: { fromStatus: "x" } });
});

test("dates print as JSON.stringify prints them", () => {
  assert.equal(snakeKeys({ at: new Date(0) }), { at: "1970-01-01T00:00:00.000Z" });
});

test.run();
