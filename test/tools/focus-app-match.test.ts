// focus_app's choice of window (daemon/computer-use/computer-use-tool.ts, pickWindow): an exact
// title, then an exact app name, then a unique start; several candidates are refused with their
// names; a text found only inside titles picks nothing. The real desktop is in computer-use.test.ts.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { pickWindow } from "../../daemon/computer-use/computer-use-tool.js";
import type { TreeApp } from "../../daemon/computer-use/desktop-driver.js";

const win = (title: string, active = false) => ({ title, active, box: null }) as unknown as TreeApp["windows"][number];
const APPS: TreeApp[] = [
  { name: "gedit", pid: 10, windows: [win("Notes"), win("Notes Backup")] },
  { name: "firefox", pid: 11, windows: [win("Inbox - Mail", false), win("Search results", true)] },
  { name: "xterm", pid: 12, windows: [win("bob@host: ~")] },
  { name: "xclock", pid: 13, windows: [win("clock")] },
];

function refused(wanted: string, apps: TreeApp[] = APPS): Error & { reason?: string } {
  try {
    pickWindow(apps, wanted);
  } catch (error) {
    return error as Error & { reason?: string };
  }
  throw new Error(`${wanted} was not refused`);
}

test("an exact title wins over a longer title starting with it, in any case", () => {
  assert.is(pickWindow(APPS, "notes").w.title, "Notes");
  assert.is(pickWindow(APPS, "NOTES BACKUP").w.title, "Notes Backup");
});

test("an exact app name: its active window, else its first", () => {
  assert.is(pickWindow(APPS, "Firefox").w.title, "Search results");
  assert.is(pickWindow(APPS, "gedit").w.title, "Notes");
});

test("a unique start of a title or app name", () => {
  assert.is(pickWindow(APPS, "inbox").w.title, "Inbox - Mail");
  assert.is(pickWindow(APPS, "xte").a.name, "xterm");
});

test("several windows starting so: refused, listing them", () => {
  const e = refused("Note");
  assert.is(e.reason, "ambiguous");
  assert.match(e.message, /2 windows have titles starting with "Note": gedit: "Notes"; gedit: "Notes Backup"/);
  const apps = refused("xc", [...APPS, { name: "xcalc", pid: 14, windows: [win("Calculator")] }]);
  assert.is(apps.reason, "ambiguous");
  assert.match(apps.message, /xclock: "clock"; xcalc: "Calculator"/);
  const same = refused("clock", [...APPS, { name: "other", pid: 15, windows: [win("Clock")] }]);
  assert.match(same.message, /2 windows are titled "clock"/);
});

test("a text only inside titles picks nothing (it used to pick the first window containing it)", () => {
  const e = refused("Backup");
  assert.is(e.reason, "not_found");
  assert.match(e.message, /no window matches "Backup" \(only inside the titles of gedit: "Notes Backup"/);
  assert.is(refused("mail").reason, "not_found");
});

test.run();
