// The private Xvfb of computer_use takes only clients with its cookie (daemon/computer-use/
// private-display.ts): a real Xvfb started by PrivateDisplay, then real xdotool clients with and
// without the Xauthority file. The file is 0600 in a 0700 directory, and removed at stop.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { PrivateDisplay } from "../../daemon/computer-use/private-display.js";
import { testUnless } from "../helpers/skip.js";

/** Null when every command runs here (their exit codes vary: only "not installed" counts). */
function missingAny(...commands: Array<[string, string[]]>): string | null {
  for (const [cmd, args] of commands) if (spawnSync(cmd, args, { stdio: "ignore" }).error) return `${cmd} is not installed`;
  return null;
}
const missing = missingAny(["Xvfb", ["-help"]], ["xdotool", ["version"]], ["dbus-daemon", ["--version"]]);
const withDisplay = testUnless(missing);

withDisplay("a client without the cookie is refused; with XAUTHORITY it connects; the file is private and goes at stop", async () => {
  const display = new PrivateDisplay(process.env, "640x480");
  try {
    const desktop = await display.start();
    const file = display.authFile!;
    assert.ok(file && desktop.env.XAUTHORITY === file, "every process on the display gets XAUTHORITY");
    assert.is(statSync(file).mode & 0o777, 0o600);
    assert.is(statSync(dirname(file)).mode & 0o777, 0o700);
    const geometry = (env: NodeJS.ProcessEnv) =>
      spawnSync("xdotool", ["getdisplaygeometry"], { env: { PATH: process.env.PATH, DISPLAY: desktop.display, ...env }, encoding: "utf8", timeout: 10_000 });
    const allowed = geometry({ XAUTHORITY: file });
    assert.is(allowed.status, 0, allowed.stderr);
    assert.match(allowed.stdout, /^640 480/);
    // Another local user (no cookie, or another one): refused.
    const refused = geometry({ XAUTHORITY: "/dev/null" });
    assert.is.not(refused.status, 0, `connected without the cookie: ${refused.stdout}`);
    display.stop();
    assert.not.ok(existsSync(file), "the Xauthority file is removed at stop");
  } finally {
    display.stop();
  }
});

test.run();
