import { test } from "uvu";
import * as assert from "uvu/assert";
import { GLOBAL_FLAGS, parseFlags } from "../../cli/args.js";

const FLAGS = {
  ...GLOBAL_FLAGS,
  component: { type: "string", shortFlag: "c" },
  lines: { type: "number", shortFlag: "n" },
  follow: { type: "boolean", shortFlag: "f" },
  image: { type: "string", isMultiple: true },
  dryRun: { type: "boolean" },
  timeout: { type: "number", default: 15 },
} as const;

const DEFAULTS = { json: false, debug: false, timeout: 15 };

const CASES: Array<[string[], string[], Record<string, unknown>]> = [
  [[], [], {}],
  [["status", "--json"], ["status"], { json: true }],
  [["set", "gateway.port", "7000", "--debug"], ["set", "gateway.port", "7000"], { debug: true }],
  [["--component", "rpc", "--lines", "5", "--follow"], [], { component: "rpc", lines: 5, follow: true }],
  [["-c", "rpc", "-n", "5", "-f"], [], { component: "rpc", lines: 5, follow: true }],
  [["--component=rpc", "--lines=7"], [], { component: "rpc", lines: 7 }],
  [["--dry-run", "x"], ["x"], { dryRun: true }],
  [["--no-follow", "--json=false"], [], { follow: false, json: false }],
  [["a", "--", "--json", "b"], ["a", "--json", "b"], {}],
  [["--timeout", "2.5", "restart"], ["restart"], { timeout: 2.5 }],
  [["--component", ""], [], { component: "" }],
];

test("long, short and --key=value flags parse into camelCase keys with their types and defaults", () => {
  for (const [argv, input, flags] of CASES) {
    const r = parseFlags(argv, FLAGS);
    assert.equal(r.input, input, `input of ${JSON.stringify(argv)}`);
    assert.equal(r.flags, { ...DEFAULTS, ...flags }, `flags of ${JSON.stringify(argv)}`);
  }
});

test("a short flag takes its value attached (-n5) and short flags group (-fc x, -fcx)", () => {
  assert.equal(parseFlags(["-n5"], FLAGS).flags.lines, 5);
  for (const argv of [["-fc", "x"], ["-fcx"]]) {
    const r = parseFlags(argv, FLAGS);
    assert.is(r.flags.follow, true, argv.join(" "));
    assert.is(r.flags.component, "x", argv.join(" "));
  }
});

test("a repeatable flag collects every value in order", () => {
  assert.equal(parseFlags(["--image", "a.png", "x", "--image=b.png"], FLAGS).flags.image, ["a.png", "b.png"]);
  assert.is(parseFlags([], FLAGS).flags.image, undefined);
});

test("negative numbers are values and arguments, not flags", () => {
  assert.equal(parseFlags(["set", "agent.max_turns", "-5"], FLAGS).input, ["set", "agent.max_turns", "-5"]);
  assert.equal(parseFlags(["call", "id", "add", "-12", "-2.5"], FLAGS).input, ["call", "id", "add", "-12", "-2.5"]);
  assert.is(parseFlags(["--lines", "-3"], FLAGS).flags.lines, -3);
  assert.is(parseFlags(["-n", "-3"], FLAGS).flags.lines, -3);
});

test("an unknown flag is a usage error naming it and the command", () => {
  for (const [argv, name] of [
    [["--bogus"], "--bogus"],
    [["-x"], "-x"],
    [["-fz"], "-z"],
    [["--no-component"], "--no-component"],
  ] as const) {
    assert.throws(
      () => parseFlags([...argv], FLAGS, "agent logs"),
      (e: Error & { code?: string }) => e.code === "usage.unknown_flag" && e.message.includes(`unknown option ${name} for \`agent logs\``),
      argv.join(" "),
    );
  }
});

test("a value flag given without its value is a usage error, also when another flag follows", () => {
  for (const argv of [["--component"], ["--component", "--json"], ["--lines"], ["-c"], ["-c", "-f"]]) {
    assert.throws(
      () => parseFlags(argv, FLAGS),
      (e: Error & { code?: string }) => e.code === "usage.missing_value" && /needs a value/.test(e.message),
      argv.join(" "),
    );
  }
});

test("a number flag refuses what is not a number, and a boolean flag refuses a value", () => {
  for (const argv of [["--lines", "many"], ["--lines="], ["-n", "1e999"]]) {
    assert.throws(
      () => parseFlags(argv, FLAGS),
      (e: Error & { code?: string }) => e.code === "usage.invalid" && /needs a number/.test(e.message),
      argv.join(" "),
    );
  }
  assert.throws(
    () => parseFlags(["--follow=yes"], FLAGS),
    (e: Error & { code?: string }) => e.code === "usage.invalid" && /takes no value/.test(e.message),
  );
});

test.run();
