import { readFileSync } from "node:fs";

/** Whether `pid` is a live process; a zombie (exited, not yet reaped by its parent) counts as dead. */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
  try {
    // /proc/<pid>/stat: "pid (comm) S ..."; the state letter follows the last ')'.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3);
    return state !== "Z" && state !== "X";
  } catch {
    return process.platform !== "linux";
  }
}
