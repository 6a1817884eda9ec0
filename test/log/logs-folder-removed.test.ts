// The logs folder removed while the daemon runs (`rm -rf ~/.agent/logs` to free space, a
// cleanup script): the one log writer (daemon/log/log-file.ts) makes it again at the next line,
// so the daemon does not go on logging into nothing until its next start.
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli, startedHome } from "../helpers/cli.js";
import { waitFor } from "../helpers/wait.js";

test("after the logs folder is removed, the next log lines make it again", async () => {
  const env = { AGENT_GATEWAY_PORT: "0" };
  const h = await startedHome(env);
  try {
    const logs = join(h.home, "logs");
    rmSync(logs, { recursive: true, force: true });
    const reload = await runCli(["daemon", "reload"], { home: h.home, env });
    assert.is(reload.code, 0, reload.stderr);
    const text = () =>
      existsSync(logs)
        ? readdirSync(logs)
            .filter((n) => n.endsWith(".log"))
            .map((n) => readFileSync(join(logs, n), "utf8"))
            .join("")
        : "";
    await waitFor("a log line about the reload in the logs folder", () => /reload/i.test(text()), 5_000);
  } finally {
    await h.dispose();
  }
});

test.run();
