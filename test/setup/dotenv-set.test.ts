import { test } from "uvu";
import * as assert from "uvu/assert";
import { parseDotenv, setDotenvKey } from "../../shared/config/dotenv.js";

/** `.env` editing by setup: the key's line is replaced in place or appended; every other line stays. */

test("a new key is appended; an existing one is replaced in place, a later duplicate removed", () => {
  assert.is(setDotenvKey("", "A_KEY", "sk-1"), "A_KEY=sk-1\n");
  assert.is(setDotenvKey("# mine\nOTHER=1", "A_KEY", "sk-1"), "# mine\nOTHER=1\nA_KEY=sk-1\n");
  const text = "# keys\r\nA_KEY=old\r\nOTHER=x # note\nexport A_KEY=dup\n";
  assert.is(setDotenvKey(text, "A_KEY", "sk-2"), "# keys\r\nA_KEY=sk-2\r\nOTHER=x # note\n");
});

test("values a reader could take apart are quoted, and read back as written", () => {
  for (const value of ["sk-abc_123", "a#b", "x$y", "p@ss:w/rd=", "k!e&y"]) {
    const text = setDotenvKey("B=1\n", "KEY", value);
    assert.is(parseDotenv(text).KEY, value, value);
    assert.is(parseDotenv(text).B, "1");
  }
});

test.run();
