import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { exitCodeFor } from "../../cli/exit-codes.js";
import { BareError } from "../../daemon/gateway/bare.js";
import { classifyError } from "../../daemon/gateway/http-error.js";
import { PoolError } from "../../daemon/pool/pool.js";
import { errorCodeInfo, EXIT, isRegisteredCode } from "../../shared/error-codes.js";
import { AgentError, publicUserError, ToolFailure } from "../../shared/errors.js";
import { ROOT } from "../helpers/cli.js";

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith(".ts") ? [path] : [];
  });
}

/** Code literals where the source raises an error: `AgentError("x.y"`, `PoolError("x.y"`, `code: "x.y"` (RPC error data). */
function raisedCodes(): Map<string, string> {
  const found = new Map<string, string>();
  const patterns = [/(?:AgentError|PoolError)\(\s*"([a-z_]+\.[a-z_]+)"/g, /\bcode: "([a-z_]+\.[a-z_]+)"/g];
  for (const dir of ["cli", "daemon", "shared", "tui"]) {
    for (const file of sources(join(ROOT, dir))) {
      const text = readFileSync(file, "utf8");
      for (const re of patterns) for (const m of text.matchAll(re)) found.set(m[1]!, relative(ROOT, file));
    }
  }
  return found;
}

test("every error code the source raises is in the registry", () => {
  const codes = raisedCodes();
  assert.ok(codes.size > 50, `found ${codes.size} codes`);
  const missing = [...codes].filter(([code]) => !isRegisteredCode(code)).map(([code, file]) => `${code} (${file})`);
  assert.equal(missing, []);
});

test("the gateway's auth codes map to 401 and 403", () => {
  assert.is(errorCodeInfo("auth.unauthorized").http, 401);
  assert.is(errorCodeInfo("auth.forbidden_origin").http, 403);
  assert.is(classifyError(new AgentError("auth.forbidden_origin", "no")).status, 403);
});

test("the CLI's exit code and the gateway's status of a code both come from the registry", () => {
  const e = new AgentError("model.rate_limited", "slow down");
  assert.is(exitCodeFor(e), EXIT.rateLimited);
  assert.is(classifyError(e).status, 400);
  assert.is(exitCodeFor(new AgentError("route.not_found", "x")), EXIT.notFound);
  assert.is(classifyError(new AgentError("route.not_found", "x")).status, 404);
});

test("a code missing from the registry exits 1 and is a 400, or a generic 500 in the internal group", () => {
  assert.is(exitCodeFor(new AgentError("user.out_of_stock", "x")), EXIT.failure);
  assert.is(classifyError(new AgentError("user.out_of_stock", "x")).status, 400);
  const internal = classifyError(new AgentError("internal.something" as never, "secret detail"));
  assert.is(internal.status, 500);
  assert.not.match(internal.message, /secret detail/);
  assert.is(exitCodeFor(new Error("plain")), EXIT.failure);
});

test("the pool, tool and BARE errors are AgentErrors that carry a code", () => {
  assert.instance(new PoolError("pool.closed", "closed"), AgentError);
  const tool = new ToolFailure("not_found", "file not found: /x");
  assert.instance(tool, AgentError);
  assert.is(tool.code, "tool.failed");
  assert.is(tool.reason, "not_found");
  const bare = classifyError(new BareError("trailing bytes"));
  assert.equal([bare.status, bare.group, bare.code, bare.message], [400, "request", "invalid", "invalid BARE body: trailing bytes"]);
});

test("an object with public: true is the one kind of user error, for the actor runtime and the gateway alike", () => {
  const thrown = Object.assign(new Error("out of stock"), { public: true, code: "out_of_stock", metadata: { sku: 7 } });
  const e = publicUserError(thrown)!;
  assert.is(e.code, "user.out_of_stock");
  assert.equal(e.metadata, { sku: 7 });
  const http = classifyError(thrown);
  assert.equal([http.status, http.group, http.code, http.message, http.metadata], [400, "user", "out_of_stock", "out of stock", { sku: 7 }]);
  assert.is(publicUserError(new Error("plain")), null);
  assert.is(classifyError(new Error("plain")).status, 500);
});

test.run();
