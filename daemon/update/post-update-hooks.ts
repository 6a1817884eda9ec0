/**
 * What `agent update` runs after the new code is in place (docs/debug-and-update.md), each a
 * command of the *new* CLI: `probe` asks whether the hook applies (exit 0 and `applies(stdout)`;
 * an unknown command, as in a version without the feature, means no), `run` does the work.
 *
 * The desktop-control driver: `agent computer-use status --json` answers `{"installed": true, …}`
 * once a driver is installed; then `agent computer-use install --upgrade` refreshes it (spec:
 * "`agent computer-use install --upgrade` and the update command refresh it").
 */
export interface PostUpdateHook {
  name: string;
  probe: readonly string[];
  applies(probeStdout: string): boolean;
  run: readonly string[];
}

export const POST_UPDATE_HOOKS: readonly PostUpdateHook[] = Object.freeze([
  {
    name: "desktop-control driver",
    probe: ["computer-use", "status", "--json"],
    applies: (stdout: string) => {
      try {
        const s = JSON.parse(stdout) as { installed?: unknown; driver?: { installed?: unknown } };
        return s.installed === true || s.driver?.installed === true;
      } catch {
        return false;
      }
    },
    run: ["computer-use", "install", "--upgrade"],
  },
]);
