// The log redactor knows the proxy's key when it is written in config.yaml (proxy.token), like
// the gateway's tokens: a line that happens to quote it never reaches a log file.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { REDACTED, Redactor, secretsOf } from "../../daemon/log/redact.js";

test("proxy.token from config.yaml is a known secret of the log redactor", () => {
  const key = "proxy-key-from-config-0123";
  assert.ok(secretsOf({ proxy: { token: key } }, {}).includes(key));
  const r = new Redactor();
  r.setSecrets("config", secretsOf({ proxy: { token: key } }, {}));
  assert.is(r.text(`upstream said: key ${key} is wrong`), `upstream said: key ${REDACTED} is wrong`);
});

test.run();
