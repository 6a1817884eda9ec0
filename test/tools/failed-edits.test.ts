import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { createToolRegistry, failedEdits, failedEditsFooter, fileMutationVerifierEnabled } from "../../daemon/agent/tools/index.js";
import { ctxFor, tempTree } from "./helpers.js";

const ok = (path: string) => ({ path, ok: true });
const fail = (path: string) => ({ path, ok: false });

test("a failed edit followed by a successful edit of the same path gives no footer", () => {
  assert.is(failedEditsFooter([fail("/a.ts"), ok("/a.ts")]), null);
});

test("a failed edit never corrected gives a footer listing the unchanged file", () => {
  const { paths, footer } = failedEdits([ok("/b.ts"), fail("/a.ts"), undefined, ok("/c.ts")]);
  assert.equal(paths, ["/a.ts"]);
  assert.match(footer!, /this file was left unchanged:\n- \/a\.ts$/);
});

test("a success followed by a failure of the same path still counts as failed", () => {
  assert.equal(failedEdits([ok("/a.ts"), fail("/a.ts")]).paths, ["/a.ts"]);
});

test("more than ten failed files are listed as ten and 'and N more'", () => {
  const many = Array.from({ length: 13 }, (_, i) => fail(`/f${i}.ts`));
  const footer = failedEditsFooter(many)!;
  const listed = footer.split("\n").filter((l) => l.startsWith("- "));
  assert.is(listed.length, 11);
  assert.is(listed[9], "- /f9.ts");
  assert.is(listed[10], "- and 3 more");
});

test("the verifier turned off in config or by the environment gives no footer", () => {
  const failed = [fail("/a.ts")];
  assert.is(failedEditsFooter(failed, { config: { display: { file_mutation_verifier: false } } }), null);
  assert.is(failedEditsFooter(failed, { env: { AGENT_FILE_MUTATION_VERIFIER: "0" } }), null);
  assert.equal(failedEdits(failed, { env: { AGENT_FILE_MUTATION_VERIFIER: "false" } }).paths, ["/a.ts"]);
  // The environment wins over the config, both ways.
  assert.ok(failedEditsFooter(failed, { config: { display: { file_mutation_verifier: false } }, env: { AGENT_FILE_MUTATION_VERIFIER: "true" } }));
  assert.is(fileMutationVerifierEnabled({}), true);
  assert.is(fileMutationVerifierEnabled({ env: { AGENT_FILE_MUTATION_VERIFIER: "maybe" } }), true);
});

test("mutation results from the real tools feed the footer", async () => {
  const registry = createToolRegistry();
  const t = tempTree({ "a.txt": "hello\n", "b.txt": "x\n" });
  try {
    const ctx = ctxFor(t.dir);
    const results = [
      await registry.execute("patch", { path: "a.txt", search: "absent", replace: "y" }, ctx),
      await registry.execute("patch", { path: "b.txt", search: "nope", replace: "y" }, ctx),
      await registry.execute("read_file", { path: "a.txt" }, ctx),
      await registry.execute("patch", { path: "a.txt", search: "hello", replace: "bye" }, ctx),
    ];
    const { paths, footer } = failedEdits(results.map((r) => r.mutation));
    assert.equal(paths, [join(t.dir, "b.txt")]);
    assert.match(footer!, /b\.txt/);
    assert.not.match(footer!, /a\.txt/);
  } finally {
    await registry.close();
    t.cleanup();
  }
});

test.run();
