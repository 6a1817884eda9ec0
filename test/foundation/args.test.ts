import { test } from "uvu";
import * as assert from "uvu/assert";
import { GLOBAL_FLAGS, parseFast, parseWithMeow } from "../../cli/args.js";

const FLAGS = {
  ...GLOBAL_FLAGS,
  component: { type: "string", shortFlag: "c" },
  lines: { type: "number", shortFlag: "n" },
  follow: { type: "boolean", shortFlag: "f" },
  dryRun: { type: "boolean" },
  timeout: { type: "number", default: 15 },
} as const;

const CASES: string[][] = [
  [],
  ["status"],
  ["status", "--json"],
  ["set", "gateway.port", "7000", "--debug"],
  ["--component", "rpc", "--lines", "5", "--follow"],
  ["-c", "rpc", "-n", "5", "-f"],
  ["--component=rpc", "--lines=7"],
  ["--dry-run", "x"],
  ["--dryRun"],
  ["--no-follow", "--json=false"],
  ["--follow", "false", "y"],
  ["set", "agent.max_turns", "-5"],
  ["--lines", "-3"],
  ["a", "--", "--json", "b"],
  ["--timeout", "2.5", "restart"],
];

test("the fast argument parser agrees with meow on every supported form", async () => {
  for (const argv of CASES) {
    const fast = parseFast(argv, FLAGS);
    assert.ok(fast, `fast path declined ${argv.join(" ")}`);
    const meow = await parseWithMeow(argv, FLAGS, "help");
    assert.equal(fast!.input, meow.input, `input of ${JSON.stringify(argv)}`);
    assert.equal(fast!.flags, JSON.parse(JSON.stringify(meow.flags)), `flags of ${JSON.stringify(argv)}`);
  }
});

test("the fast parser hands unusual forms to meow instead of guessing", () => {
  assert.is(parseFast(["-fc", "x"], FLAGS), null);
  assert.is(parseFast(["x"], { many: { type: "string", isMultiple: true } }), null);
});

test("a value flag given without its value is a usage error, while an explicit empty value is kept", () => {
  for (const argv of [["--component"], ["--component", "--json"], ["--lines"], ["-c"]]) {
    assert.throws(() => parseFast(argv, FLAGS), (e: Error & { code?: string }) => e.code === "usage.missing_value" && /needs a value/.test(e.message), argv.join(" "));
  }
  assert.is(parseFast(["--component", ""], FLAGS)!.flags.component, "");
});

test.run();
