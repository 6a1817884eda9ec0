import { test } from "uvu";
import * as assert from "uvu/assert";
import { resolveConfig } from "../../shared/config/resolve.js";
import { configKeys, parseValueFor, validateFileValues } from "../../shared/config/schema.js";

test("the lsp keys have their defaults", () => {
  const lsp = resolveConfig({}, {}).lsp;
  assert.equal(lsp, { enabled: true, wait_mode: "block", wait_timeout: 5, baseline_timeout: 8, install_strategy: "auto", servers: {} });
  assert.ok(["lsp.enabled", "lsp.wait_mode", "lsp.wait_timeout", "lsp.install_strategy"].every((k) => configKeys().includes(k)));
});

test("per-server overrides are accepted in config.yaml", () => {
  const warnings = validateFileValues(
    {
      lsp: {
        servers: {
          typescript: {
            disabled: false,
            command: ["/bin/tsls", "--stdio"],
            env: { TSS_LOG: "-level verbose" },
            initialization_options: { preferences: { quoteStyle: "single" } },
          },
        },
      },
    },
    "config.yaml",
  );
  assert.equal(warnings, []);
});

test("an invalid lsp value is refused with its key", () => {
  assert.throws(() => validateFileValues({ lsp: { install_strategy: "sometimes" } }, "config.yaml"), /lsp.install_strategy must be one of auto, manual, off/);
  assert.throws(() => validateFileValues({ lsp: { wait_mode: "forever" } }, "config.yaml"), /lsp.wait_mode must be one of block, settle/);
  assert.throws(() => validateFileValues({ lsp: { wait_timeout: 0 } }, "config.yaml"), /lsp.wait_timeout must be a number between/);
  assert.throws(
    () => validateFileValues({ lsp: { servers: { pyright: { env: { A: 1 } } } } }, "config.yaml"),
    /lsp.servers.pyright.env must map names to strings/,
  );
  assert.throws(
    () => validateFileValues({ lsp: { servers: { pyright: { command: [] } } } }, "config.yaml"),
    /lsp.servers.pyright.command must name the executable first/,
  );
  assert.throws(() => validateFileValues({ lsp: { servers: { pyright: { initialization_options: [1] } } } }, "config.yaml"), /must be a mapping/);
});

test("an unknown field of a server override is a warning, not an error", () => {
  assert.equal(validateFileValues({ lsp: { servers: { pyright: { colour: "red" } } } }, "config.yaml"), [
    "config.yaml: unknown key lsp.servers.pyright.colour (ignored)",
  ]);
});

test("config set parses a server's command and env from the command line", () => {
  assert.equal(parseValueFor("lsp.servers.bash.command", '["bash-language-server","start"]'), ["bash-language-server", "start"]);
  assert.equal(parseValueFor("lsp.servers.bash.env", '{"A":"b"}'), { A: "b" });
  assert.throws(() => parseValueFor("lsp.servers.bash.env", "A=b"), /must be a JSON object/);
});

test.run();
