import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { connectDaemon } from "../../shared/client/index.js";
import { chatHome } from "../agent/helpers.js";
import { CLI } from "../helpers/cli.js";
import { missingCommand, testUnless } from "../helpers/skip.js";
import { waitFor } from "../helpers/wait.js";

/**
 * Issue 36: the TUI as people see it. A real xterm (Debian's) under Xvfb draws the TUI at 130x40;
 * the pictures are taken with ImageMagick's `import` and checked for what a regression would
 * break: the code block has more than two foreground colours, no column of the board is blank
 * while the board has tasks, the tab bar is not saturated blue. The PNGs are kept in
 * test-artifacts/tui-screenshots/ (gitignored) to be looked at.
 */

const missing =
  missingCommand("Xvfb", ["-help"]) ??
  missingCommand("xterm", ["-version"]) ??
  missingCommand("import", ["-version"]) ??
  missingCommand("xdotool", ["--version"]);
const withX = testUnless(missing);
const ARTIFACTS = join(process.cwd(), "test-artifacts", "tui-screenshots");
const COLS = 130;
const ROWS = 40;
/** The misc-fixed 6x13 font in its Unicode encoding (xfonts-base): box glyphs, no anti-aliasing. */
const FONT = "-misc-fixed-medium-r-semicondensed--13-120-75-75-c-60-iso10646-1";

const ANSWER = [
  "## The change",
  "",
  "```ts",
  "export function total(items: Item[]): number {",
  "  // sum the prices",
  '  return items.reduce((sum, item) => sum + item.price, 0); // "cents"',
  "}",
  "```",
  "",
  "| file | lines | status |",
  "|---|---|---|",
  "| src/total.ts | 12 | changed |",
  "| test/total.test.ts | 40 | added |",
  "",
  "```diff",
  "@@ -1,3 +1,3 @@",
  "-const tax = 0.2;",
  "+const tax = 0.25;",
  " export { tax };",
  "```",
].join("\n");

let h: Awaited<ReturnType<typeof chatHome>>;
let xvfb: ChildProcess | null = null;
let display = "";
const terms: ChildProcess[] = [];

interface Picture {
  width: number;
  height: number;
  rgb: Buffer;
}

function grab(windowId: string, name: string): Picture {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  // XGetImage can answer "Resource temporarily unavailable" while the window is being redrawn
  // (seen once on a loaded machine): the capture is tried again, a few times, not waited for.
  for (let attempt = 1; ; attempt++) {
    try {
      execFileSync("import", ["-display", display, "-window", windowId, file], { stdio: ["ignore", "ignore", "pipe"] });
      break;
    } catch (error) {
      const text = String((error as { stderr?: Buffer }).stderr ?? error);
      if (attempt >= 5 || !/temporarily unavailable/i.test(text)) throw error;
    }
  }
  const size = execFileSync("identify", ["-format", "%w %h", file], { encoding: "utf8" }).trim().split(" ").map(Number);
  const rgb = execFileSync("convert", [file, "-depth", "8", "rgb:-"], { maxBuffer: 64 * 1024 * 1024 });
  return { width: size[0]!, height: size[1]!, rgb };
}

const at = (p: Picture, x: number, y: number) => {
  const i = (y * p.width + x) * 3;
  return (p.rgb[i]! << 16) | (p.rgb[i + 1]! << 8) | p.rgb[i + 2]!;
};

/** The most common colour of a region: its background. */
function background(p: Picture, x0: number, y0: number, x1: number, y1: number): number {
  const counts = new Map<number, number>();
  for (let y = y0; y < y1; y++) for (let x = x0; x < x1; x++) counts.set(at(p, x, y), (counts.get(at(p, x, y)) ?? 0) + 1);
  return [...counts.entries()].sort((a, b) => b[1] - a[1])[0]![0];
}

/** Foreground colours of a region (those other than its background, with at least `min` pixels). */
function foregrounds(p: Picture, x0: number, y0: number, x1: number, y1: number, min = 6): Set<number> {
  const bg = background(p, x0, y0, x1, y1);
  const counts = new Map<number, number>();
  for (let y = y0; y < y1; y++)
    for (let x = x0; x < x1; x++) {
      const c = at(p, x, y);
      if (c !== bg) counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  return new Set([...counts.entries()].filter(([, n]) => n >= min).map(([c]) => c));
}

/** Start xterm running the TUI; its X window id once it is mapped. */
async function xterm(extra: string): Promise<string> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DISPLAY: display,
    AGENT_HOME: h.home,
    AGENT_GATEWAY_PORT: "0",
    COLORTERM: "truecolor",
  };
  delete env.NO_COLOR;
  const title = `agent-shot-${terms.length}`;
  const args = ["-geometry", `${COLS}x${ROWS}+0+0`, "-b", "0", "-fn", FONT, "-bg", "#0d1117", "-fg", "#c9d1d9", "-tn", "xterm-256color", "-T", title];
  args.push("-xrm", "XTerm*allowTitleOps: false", "-e", process.execPath, CLI, "--tui", ...extra.split(" ").filter(Boolean));
  const child = spawn("xterm", args, { env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  terms.push(child);
  // If the window never comes, say what xterm said and whether it is still running.
  const why = () => `the xterm window (xterm ${child.exitCode === null ? "running" : `exited ${child.exitCode}`}; stderr: ${stderr.slice(-400) || "none"})`;
  const id = await waitFor(
    why,
    () => {
      try {
        return execFileSync("xdotool", ["search", "--name", title], { env, encoding: "utf8" }).trim().split("\n")[0] || false;
      } catch {
        return false;
      }
    },
    // Two whole-suite runs beside three other files missed 15 s (not reproduced alone or beside
    // the other X tests); the message now says what xterm was doing.
    30_000,
  );
  return id;
}

/** Take pictures until `ok` holds for one (the TUI drew what the test waits for); the last one. */
async function shoot(windowId: string, name: string, ok: (p: Picture) => boolean, timeoutMs = 20_000): Promise<Picture> {
  let last: Picture | null = null;
  let lastAt = 0;
  await waitFor(
    `the picture ${name} to show it`,
    () => {
      // A picture costs a few processes: at most four a second.
      if (Date.now() - lastAt < 250) return false;
      lastAt = Date.now();
      last = grab(windowId, name);
      return ok(last);
    },
    timeoutMs,
  ).catch(() => undefined);
  return last!;
}

test.before(async () => {
  if (missing) return;
  h = await chatHome({ respond: () => ({ text: "ok" }) });
  const started = await h.cli(["daemon", "start"]);
  if (started.code !== 0) throw new Error(started.stderr);
  const capped = await h.cli(["config", "set", "kanban.max_in_progress", "0"]);
  if (capped.code !== 0) throw new Error(capped.stderr);
  // Xvfb says its display number on a pipe when it is ready (no guessed wait).
  xvfb = spawn("Xvfb", ["-displayfd", "3", "-screen", "0", "1280x720x24", "-nolisten", "tcp", "-noreset"], { stdio: ["ignore", "ignore", "ignore", "pipe"] });
  const fd = xvfb.stdio[3] as NodeJS.ReadableStream;
  display = await new Promise<string>((resolve, reject) => {
    let text = "";
    fd.on("data", (b: Buffer) => {
      text += b.toString();
      if (text.includes("\n")) resolve(`:${text.trim()}`);
    });
    xvfb!.once("exit", (code) => reject(new Error(`Xvfb exited ${code}`)));
  });
});

test.after(async () => {
  for (const t of terms) t.kill();
  xvfb?.kill();
  if (h) await h.dispose();
});

withX("xterm draws the chat: a highlighted code block, a table, a diff; the tab bar is not saturated blue", async () => {
  const client = await connectDaemon({ home: h.home, autostart: false });
  let sessionId: string;
  try {
    sessionId = (await client.call("chat.sessions.create", { title: "screenshot" })).session.id;
    const args = JSON.stringify({ path: "src/tax.ts", search: "const tax = 0.2;", replace: "const tax = 0.25;" });
    await client.call("chat.sessions.append", {
      sessionId,
      messages: [
        { role: "user", content: "what changed?" },
        { role: "assistant", content: "", tool_calls: [{ id: "c1", type: "function", function: { name: "patch", arguments: args } }] },
        { role: "tool", tool_call_id: "c1", content: '{"ok":true,"bytes_written":18}' },
        { role: "assistant", content: ANSWER },
      ],
    });
  } finally {
    client.close();
  }
  const id = await xterm(`--resume ${sessionId}`);
  const shot = await shoot(id, "chat", (p) => p.width > 0 && codeRows(p).length > 0);
  const cw = shot.width / COLS;
  const ch = shot.height / ROWS;
  assert.is(Math.round(cw), cw, `the picture is ${COLS} cells wide (${shot.width} px)`);
  // The code block: rows of the transcript with more than two foreground colours.
  const rows = codeRows(shot);
  assert.ok(rows.length >= 3, `code rows with more than 2 foreground colours: ${rows.length}`);
  // The tab bar: not #0000ff.
  let blue = 0;
  for (let y = 0; y < ch; y++) for (let x = 0; x < shot.width; x++) if (at(shot, x, y) === 0x0000ff) blue++;
  assert.ok(blue < (shot.width * ch) / 100, `${blue} pixels of the tab bar are #0000ff`);
  const barBg = background(shot, 0, 0, shot.width, ch);
  assert.is.not(barBg, 0x0000ff);
});

/** Rows of the transcript (left of the sidebar) drawn in more than two foreground colours. */
function codeRows(p: Picture): number[] {
  const cw = p.width / COLS;
  const ch = p.height / ROWS;
  const out: number[] = [];
  const right = Math.floor((COLS - 36) * cw);
  // Below the tab bar, above the input box and the status bar.
  for (let r = 2; r < ROWS - 6; r++) {
    const colors = foregrounds(p, 0, r * ch, right, (r + 1) * ch);
    if (colors.size > 2) out.push(r);
  }
  return out;
}

withX("xterm draws the board: tasks in triage and blocked, no column blank", async () => {
  for (const title of ["split the importer into stages", "a flaky test in the gateway", "document the theme"]) {
    const r = await h.cli(["kanban", "create", title, "--triage"]);
    assert.is(r.code, 0, r.stderr);
  }
  const made = await h.cli(["kanban", "create", "upgrade the TLS library", "--json"]);
  assert.is(made.code, 0, made.stderr);
  const blockedId = JSON.parse(made.stdout).task.id as string;
  const blocked = await h.cli(["kanban", "block", blockedId, "waiting for the vendor"]);
  assert.is(blocked.code, 0, blocked.stderr);
  const id = await xterm("");
  // The chat first; then F4 (typed through XTEST to the window under the pointer).
  await shoot(id, "board-start", (p) => p.width > 0 && foregrounds(p, 0, 0, p.width, p.height / ROWS).size > 1);
  execFileSync("xdotool", ["mousemove", "--window", id, "50", "50"], { env: { ...process.env, DISPLAY: display } });
  execFileSync("xdotool", ["key", "F4"], { env: { ...process.env, DISPLAY: display } });
  const shot = await shoot(id, "kanban", (p) => boardColumns(p).length >= 3 && blankColumns(p).length === 0);
  const columns = boardColumns(shot);
  assert.ok(columns.length >= 3, `board columns found: ${columns.length}`);
  assert.equal(blankColumns(shot), [], "no column of the board is blank");
  // The wide columns (not strips) are the ones with tasks: triage and blocked.
  const cw = shot.width / COLS;
  const wide = columns.filter(([a, b]) => b - a > 12 * cw);
  assert.is(wide.length, 2, `two full columns (triage, blocked): ${JSON.stringify(columns.map(([a, b]) => Math.round((b - a) / cw)))}`);
});

/** The board's columns as [left, right] pixel spans between vertical box lines. */
function boardColumns(p: Picture): Array<[number, number]> {
  const cw = p.width / COLS;
  const ch = p.height / ROWS;
  const top = 3 * ch;
  const bottom = (ROWS - 2) * ch;
  const right = Math.floor((COLS - 34) * cw);
  const bg = background(p, 0, top, right, bottom);
  const lines: number[] = [];
  for (let x = 0; x < right; x++) {
    let n = 0;
    for (let y = top; y < bottom; y++) if (at(p, x, y) !== bg) n++;
    if (n >= (bottom - top) * 0.97) lines.push(x);
  }
  const spans: Array<[number, number]> = [];
  for (let i = 1; i < lines.length; i++) if (lines[i]! - lines[i - 1]! > cw * 1.5) spans.push([lines[i - 1]! + 1, lines[i]!]);
  return spans;
}

/** Columns with nothing drawn inside their box. */
function blankColumns(p: Picture): Array<[number, number]> {
  const ch = p.height / ROWS;
  return boardColumns(p).filter(([a, b]) => foregrounds(p, a, 3 * ch, b, (ROWS - 2) * ch, 4).size === 0);
}

test.run();
