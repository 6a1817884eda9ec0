import { fg, statusRole } from "../theme.js";
import blessed from "blessed";
import type { Task, TaskStatus, TaskSummary, WorkerProcess } from "../../shared/protocol/kanban.js";
import { terminalText } from "../../shared/terminal-text.js";
import { WORKER_COLUMNS, workerCells, workerTitle } from "../../shared/kanban-ps-row.js";
import { renderMarkdown } from "../markdown.js";
import { ago, esc, pad, tagged, truncate, wrapRuns } from "../text.js";
import { diffLines } from "../highlight.js";
import type { Key } from "../widgets/input.js";
import { TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** The board's columns, in workflow order (archived only on request). */
const COLUMNS: TaskStatus[] = ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done"];
const MIN_COLUMN = 20;
/** The width of a column drawn as a strip (empty, or out of room). */
const STRIP = 7;
/** Short names for the status strip on a narrow screen. */
const SHORT: Record<string, string> = {
  triage: "tri",
  todo: "todo",
  scheduled: "sched",
  ready: "rdy",
  running: "run",
  blocked: "blk",
  review: "rev",
  done: "done",
  archived: "arch",
};

/**
 * The kanban board: a column per status, a task's detail, and the board's actions on keys.
 * Changes arrive as the daemon's `kanban.event.<board>` events (no polling).
 */
export class KanbanView implements View {
  readonly id = "kanban" as const;
  readonly title = "Kanban";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "←/→, h/l", does: "previous / next column" },
    { keys: "↑/↓, j/k", does: "previous / next task in the column" },
    { keys: "Enter", does: "the task's detail: body, comments, events, runs, worker log (Esc back, ↑/↓ scroll)" },
    { keys: "c", does: "create a task (title, then assignee; empty for the default)" },
    { keys: "t", does: "create a task in triage (for the decomposer)" },
    { keys: "a", does: "assign the task to a profile" },
    { keys: "m", does: "comment on the task" },
    { keys: "b / u", does: "block (with a reason) / unblock the task" },
    { keys: "s", does: "schedule the task (with a reason)" },
    { keys: "p", does: "promote a triage task without decomposing it" },
    { keys: "R", does: "release a held task (created with --hold) so it can be dispatched" },
    { keys: "x", does: "archive the task (asks first)" },
    { keys: "D", does: "decompose the task (triage: the model splits or tightens it)" },
    { keys: "S", does: "dispatch now: start workers for ready tasks" },
    { keys: "P", does: "the running workers (pid, group CPU and RSS, runtime, heartbeat, log size); K kills one, Esc back" },
    { keys: "V / J", does: "approve / reject (with a reason) a task in review" },
    { keys: "M", does: "merge a done task's branch into its base branch (asks first)" },
    { keys: "K", does: "kill the task's worker (asks first)" },
    { keys: "A", does: "show or hide archived tasks" },
    { keys: "r", does: "refresh" },
  ];
  private readonly board: blessed.Widgets.BoxElement;
  private readonly detail: TextPane;
  private tasks: TaskSummary[] = [];
  private boardName = "";
  /** The selected column; the board opens at triage, the workflow's first. */
  private col = 0;
  private row = new Map<TaskStatus, number>();
  private showArchived = false;
  /** A key chose the column: the board no longer jumps to its first column with tasks. */
  private moved = false;
  private detailTask: Task | null = null;
  private detailLog = "";
  private reloadTimer: NodeJS.Timeout | null = null;
  private subscribed = false;
  private available = true;
  private more = "";
  /** The first column in view. */
  private first = 0;
  private detailDiff = "";
  /** The process view (P): the running workers, refreshed every 2 s while shown. */
  private psShown = false;
  private workers: WorkerProcess[] = [];
  private psRow = 0;
  private psTimer: NodeJS.Timeout | null = null;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.board = blessed.box({ parent: this.root, top: 0, left: 0, width: "100%", height: "100%", tags: true, wrap: false });
    this.detail = new TextPane({ parent: this.root, top: 0, left: 0, width: "100%", height: "100%", label: " Task " });
    this.detail.box.hide();
    app.conn.on("event", (e: { topic: string; data: { task_id?: string } }) => {
      if (!e.topic.startsWith("kanban.event.")) return;
      this.scheduleReload(e.data.task_id);
    });
  }

  /** Subscribe to the board's events and load it once: the status bar counts its running workers. */
  async init(): Promise<void> {
    if (!this.subscribed) {
      this.subscribed = true;
      await this.app.conn.subscribe(["kanban.event"]).catch(() => undefined);
    }
    await this.load();
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    void this.init();
  }

  reconnected(): void {
    void this.load();
  }

  private get columns(): TaskStatus[] {
    return this.showArchived ? [...COLUMNS, "archived"] : COLUMNS;
  }

  private scheduleReload(taskId?: string): void {
    if (taskId && this.detailTask?.id === taskId) void this.loadDetail(taskId);
    if (this.reloadTimer) return;
    // Coalesce a burst of events (a decomposition, a dispatch) into one reload.
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = null;
      void this.load();
    }, 100);
  }

  private async load(): Promise<void> {
    try {
      const r = await this.app.conn.call("kanban.list", { all: this.showArchived });
      this.available = true;
      this.tasks = r.tasks;
      this.boardName = r.board;
      this.app.status.workers = r.tasks.filter((t) => t.status === "running").length;
      // The view opens on the first column with tasks (until a key has moved it).
      const firstWithTasks = this.columns.findIndex((s) => this.column(s).length > 0);
      if (!this.moved && firstWithTasks >= 0) this.col = firstWithTasks;
    } catch (error) {
      if (/method|not found|unknown/i.test(errorText(error))) this.available = false;
      else this.app.flash(`kanban: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private column(status: TaskStatus): TaskSummary[] {
    return this.tasks.filter((t) => t.status === status).sort((a, b) => b.priority - a.priority || a.created_at - b.created_at);
  }

  private get selected(): TaskSummary | undefined {
    const status = this.columns[this.col]!;
    const list = this.column(status);
    const i = Math.min(this.row.get(status) ?? 0, list.length - 1);
    return list[i];
  }

  private async loadDetail(id: string): Promise<void> {
    try {
      const [{ task }, log, diff] = await Promise.all([
        this.app.conn.call("kanban.show", { id }),
        this.app.conn.call("kanban.log", { taskId: id, lines: 20 }).catch(() => null),
        this.app.conn.call("kanban.diff", { id }).catch(() => null),
      ]);
      this.detailTask = task;
      this.detailLog = log?.text ?? "";
      this.detailDiff = diff?.text ?? "";
      this.detail.setLines(this.detailLines(task), true);
    } catch (error) {
      this.detail.setLines([`${fg("error")}${esc(errorText(error))}{/}`]);
    }
    this.app.requestRender();
  }

  private detailLines(t: Task): string[] {
    const w = this.detail.width;
    const para = (text: string, style = "") => wrapRuns([{ text: terminalText(text), style }], w);
    const time = (ms: number) => new Date(ms).toISOString().slice(5, 19).replace("T", " ");
    const section = (title: string) => ["", `{bold}${fg("accent")}${esc(title)}{/}`];
    const lines = [
      `{bold}${esc(terminalText(t.title))}{/bold}`,
      `${fg("muted")}${esc(t.id)} · {/}${fg(statusRole(t.status))}${t.status}{/}${fg("muted")} · ${esc(t.assignee ?? "unassigned")} · priority ${t.priority} · created ${ago(t.created_at)} ago{/}`,
    ];
    if (t.held) lines.push(`${fg("special")}held: not dispatched until released (R){/}`);
    if (t.reason) lines.push(...para(`reason: ${t.reason}`, `${fg("warn")}`));
    if (t.parents.length || t.children.length)
      lines.push(`${fg("muted")}parents ${esc(t.parents.join(", ") || "–")} · children ${esc(t.children.join(", ") || "–")}{/}`);
    if (t.consecutive_failures) lines.push(`${fg("error")}${t.consecutive_failures} consecutive failures{/}`);
    // Body, summary and result are Markdown (code blocks highlighted, as in the chat).
    const markdown = (text: string) => renderMarkdown(terminalText(text), w);
    lines.push(...section("Body"), ...(t.body.trim() ? markdown(t.body) : [`${fg("muted")}(empty){/}`]));
    // The worker's completion: its short summary and, apart, the result it reported.
    if (t.summary) lines.push(...section("Summary"), ...markdown(t.summary));
    if (t.result) lines.push(...section("Result"), ...markdown(t.result));
    if (t.git) {
      const g = t.git;
      lines.push(...section("Worktree"));
      lines.push(
        `${fg("muted")}branch{/} ${esc(g.branch ?? "(made when dispatched)")} ${fg("muted")}from ${esc(g.base_ref ?? "-")}${g.base ? ` ${esc(g.base.slice(0, 12))}` : ""}{/}`,
        `${fg("muted")}path{/} ${esc(g.path ?? "-")}${g.removed ? ` ${fg("muted")}(removed){/}` : ""}`,
      );
      if (g.work)
        lines.push(
          `${fg("muted")}work{/} ${g.work.commits.length} commit(s), ${g.work.files_changed} file(s) ${fg("diffAdd")}+${g.work.insertions}{/} ${fg("diffDel")}-${g.work.deletions}{/}`,
        );
      if (g.merged) lines.push(`${fg("ok")}merged into ${esc(g.merged.into)} ${esc(g.merged.commit.slice(0, 12))}{/}`);
      if (t.status === "review") lines.push(`${fg("special")}in review: V approves, J rejects with a reason{/}`);
      lines.push(...section("Diff"), ...(this.detailDiff.trim() ? diffPaneLines(this.detailDiff, w) : [`${fg("muted")}no changes{/}`]));
    }
    lines.push(...section(`Comments (${t.comments.length})`));
    for (const c of t.comments) lines.push(`${fg("muted")}${time(c.at)} ${esc(terminalText(c.author))}{/}`, ...para(`  ${c.body}`));
    lines.push(...section(`Runs (${t.runs.length})`));
    for (const r of t.runs)
      lines.push(
        `${esc(r.run_id)} ${esc(r.profile)} ${fg(statusRole(r.outcome === "running" || r.outcome === "completed" ? r.outcome : "failed"))}${esc(r.outcome)}{/} ${fg("muted")}${time(r.started_at)}${r.ended_at ? ` → ${time(r.ended_at)}` : ""}${r.pid ? ` pid ${r.pid}` : ""}{/}${r.detail ? ` ${esc(terminalText(r.detail))}` : ""}`,
      );
    lines.push(...section(`Events (${t.events.length})`));
    for (const e of t.events.slice(-30))
      lines.push(
        `${fg("muted")}${time(e.at)}{/} ${esc(e.type)} ${fg("muted")}by ${esc(e.by)}${e.data ? ` ${esc(truncate(terminalText(JSON.stringify(e.data)), w - 40))}` : ""}{/}`,
      );
    lines.push(...section("Worker log (last lines)"));
    lines.push(
      ...(this.detailLog.trim()
        ? terminalText(this.detailLog)
            .trimEnd()
            .split("\n")
            .map((l) => esc(truncate(l, w)))
        : [`${fg("muted")}none{/}`]),
    );
    return lines;
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.psShown && !this.detailTask) return this.psKey(ch, key);
    if (ch === "P" && !this.detailTask) {
      this.showPs(true);
      return true;
    }
    if (this.detailTask) {
      if (key.name === "escape" || key.name === "return" || ch === "q") {
        this.detailTask = null;
        this.detail.box.hide();
        this.board.show();
        return true;
      }
      if (this.detail.handleKey(ch, key)) return true;
      return this.action(ch, this.detailTask);
    }
    const cols = this.columns;
    const status = cols[this.col]!;
    const n = this.column(status).length;
    const row = this.row.get(status) ?? 0;
    if (key.name === "left" || ch === "h") this.step(cols, -1);
    else if (key.name === "right" || ch === "l") this.step(cols, 1);
    else if (key.name === "up" || ch === "k") this.row.set(status, Math.max(0, Math.min(row, n - 1) - 1));
    else if (key.name === "down" || ch === "j") this.row.set(status, Math.min(Math.max(0, n - 1), row + 1));
    else if (key.name === "return") {
      const t = this.selected;
      if (!t) return true;
      this.detailTask = { id: t.id } as Task;
      this.board.hide();
      this.detail.box.show();
      this.detail.setLines(["loading…"]);
      void this.loadDetail(t.id);
    } else return this.action(ch, this.selected);
    return true;
  }

  /** To the next column with tasks (any column while the board has none). */
  private step(cols: TaskStatus[], dir: 1 | -1): void {
    this.moved = true;
    for (let i = this.col + dir; i >= 0 && i < cols.length; i += dir) {
      if (!this.tasks.length || this.column(cols[i]!).length > 0) {
        this.col = i;
        return;
      }
    }
  }

  /** The board's actions on the selected task (or a new one). */
  private action(ch: string | undefined, t: { id: string; title?: string } | undefined): boolean {
    const conn = this.app.conn;
    const run = (what: string, fn: () => Promise<unknown>) =>
      void fn()
        .then(() => this.app.flash(what))
        .catch((e) => this.app.flash(errorText(e), "error"));
    switch (ch) {
      case "c":
      case "t":
        void this.create(ch === "t");
        return true;
      case "r":
        void this.load();
        return true;
      case "A":
        this.showArchived = !this.showArchived;
        this.col = Math.min(this.col, this.columns.length - 1);
        void this.load();
        return true;
      case "S":
        run("dispatched", async () => {
          const r = await conn.call("kanban.dispatch", {});
          this.app.flash(`dispatch: ${r.spawned.length} started, ${r.skipped.length} skipped`);
        });
        return true;
    }
    if (!t) return false;
    const ids = [t.id];
    switch (ch) {
      case "a":
        void this.app
          .prompt(`Assign ${t.id} to profile`)
          .then((p) => p?.trim() && run(`assigned ${t.id}`, () => conn.call("kanban.assign", { ids, assignee: p.trim() })));
        return true;
      case "m":
        void this.app
          .prompt(`Comment on ${t.id}`)
          .then((body) => body?.trim() && run(`commented on ${t.id}`, () => conn.call("kanban.comment", { id: t.id, body: body.trim(), author: "tui" })));
        return true;
      case "b":
        void this.app
          .prompt(`Block ${t.id}: reason`)
          .then(
            (reason) =>
              reason !== null && run(`blocked ${t.id}`, () => conn.call("kanban.block", { ids, ...(reason.trim() ? { reason: reason.trim() } : {}) })),
          );
        return true;
      case "u":
        run(`unblocked ${t.id}`, () => conn.call("kanban.unblock", { ids }));
        return true;
      case "s":
        void this.app
          .prompt(`Schedule ${t.id}: reason`)
          .then(
            (reason) =>
              reason !== null && run(`scheduled ${t.id}`, () => conn.call("kanban.schedule", { ids, ...(reason.trim() ? { reason: reason.trim() } : {}) })),
          );
        return true;
      case "p":
        run(`promoted ${t.id}`, () => conn.call("kanban.promote", { ids }));
        return true;
      case "R":
        run(`released ${t.id}`, () => conn.call("kanban.release", { ids }));
        return true;
      case "x":
        void this.app.confirm(`Archive ${t.id}?`).then((yes) => yes && run(`archived ${t.id}`, () => conn.call("kanban.archive", { ids })));
        return true;
      case "V":
        run(`approved ${t.id}`, () => conn.call("kanban.approve", { ids }));
        return true;
      case "J":
        void this.app
          .prompt(`Reject ${t.id}: reason (a comment for its next run)`)
          .then((reason) => reason?.trim() && run(`rejected ${t.id}`, () => conn.call("kanban.reject", { id: t.id, reason: reason.trim() })));
        return true;
      case "M":
        void this.app.confirm(`Merge ${t.id}'s branch into its base branch?`).then(
          (yes) =>
            yes &&
            run(`merged ${t.id}`, async () => {
              const r = await conn.call("kanban.merge", { id: t.id });
              this.app.flash(`merged into ${r.into} (${r.commit.slice(0, 12)})`);
            }),
        );
        return true;
      case "K":
        void this.app.confirm(`Kill the worker of ${t.id}?`).then((yes) => yes && run(`killed ${t.id}'s worker`, () => conn.call("kanban.kill", { id: t.id })));
        return true;
      case "D":
        run(`decomposing ${t.id}…`, async () => {
          const { results } = await conn.call("kanban.decompose", { taskIds: ids });
          const r = results[0];
          this.app.flash(
            r?.ok ? (r.fanout ? `decomposed into ${r.child_ids.length} tasks` : "tightened and promoted") : `not decomposed: ${r?.reason ?? "no result"}`,
            r?.ok ? "info" : "error",
          );
        });
        return true;
    }
    return false;
  }

  private async create(triage: boolean): Promise<void> {
    const title = await this.app.prompt(triage ? "New triage task: title" : "New task: title");
    if (!title?.trim()) return;
    const assignee = triage ? "" : await this.app.prompt("Assignee (a profile; empty for the default)");
    if (assignee === null) return;
    try {
      const { task, notice } = await this.app.conn.call("kanban.create", {
        title: title.trim(),
        ...(assignee.trim() ? { assignee: assignee.trim() } : {}),
        ...(triage ? { triage: true } : {}),
        workspace: process.cwd(),
        by: "tui",
      });
      this.app.flash(`created ${task.id} in ${task.status}${notice ? ` (${notice})` : ""}`);
      this.col = Math.max(0, this.columns.indexOf(task.status));
      this.moved = true;
      await this.load();
      const i = this.column(task.status).findIndex((x) => x.id === task.id);
      if (i >= 0) this.row.set(task.status, i);
    } catch (error) {
      this.app.flash(errorText(error), "error");
    }
  }

  // ---------- the process view ----------

  private showPs(on: boolean): void {
    this.psShown = on;
    if (this.psTimer) clearInterval(this.psTimer);
    this.psTimer = null;
    if (on) {
      void this.loadPs();
      this.psTimer = setInterval(() => void this.loadPs(), 2000);
      this.psTimer.unref?.();
    }
    this.app.requestRender();
  }

  private async loadPs(): Promise<void> {
    try {
      this.workers = (await this.app.conn.call("kanban.ps", {})).workers;
    } catch (error) {
      this.app.flash(`kanban ps: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private psKey(ch: string | undefined, key: Key): boolean {
    if (key.name === "escape" || ch === "q" || ch === "P") this.showPs(false);
    else if (key.name === "up" || ch === "k") this.psRow = Math.max(0, this.psRow - 1);
    else if (key.name === "down" || ch === "j") this.psRow = Math.min(Math.max(0, this.workers.length - 1), this.psRow + 1);
    else if (ch === "r") void this.loadPs();
    else if (ch === "K") {
      const w = this.workers[this.psRow];
      if (w) return this.action("K", { id: w.task_id });
    } else if (key.name === "return") {
      const w = this.workers[this.psRow];
      if (!w) return true;
      this.showPs(false);
      this.detailTask = { id: w.task_id } as Task;
      this.board.hide();
      this.detail.box.show();
      this.detail.setLines(["loading…"]);
      void this.loadDetail(w.task_id);
    }
    this.app.requestRender();
    return true;
  }

  private psContent(width: number): string {
    const head = `{bold}Running workers (${this.workers.length}){/bold}  ${fg("muted")}↑/↓ select · Enter detail · K kill · Esc back · every 2 s{/}`;
    if (!this.workers.length) return `${head}\n\n${fg("muted")}no running workers{/}`;
    const cols: string[] = [...WORKER_COLUMNS];
    const now = Date.now();
    const rows = this.workers.map((w) => workerCells(w, now));
    const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!)).join("  ");
    const used = widths.reduce((n, x) => n + x + 2, 0);
    const out = [head, "", `${fg("muted")}${esc(line(cols))}  TITLE{/}`];
    rows.forEach((r, i) => {
      const text = esc(`${line(r)}  ${truncate(workerTitle(this.workers[i]!), Math.max(0, width - used))}`);
      out.push(i === this.psRow ? `{inverse}${text}{/}` : text);
    });
    return out.join("\n");
  }

  draw(): void {
    if (this.psShown && !this.detailTask) {
      this.psRow = Math.min(this.psRow, Math.max(0, this.workers.length - 1));
      this.board.setContent(this.psContent(this.board.width as number));
      return;
    }
    if (this.detailTask) {
      this.detail.box.setLabel(` Task ${this.detailTask.id} (Esc back) `);
      this.detail.draw();
      return;
    }
    const width = this.board.width as number;
    const height = this.board.height as number;
    if (!this.available) {
      this.board.setContent(`${fg("muted")}The daemon has no kanban board.{/}`);
      return;
    }
    const cols = this.columns;
    const layout = this.layout(cols, width);
    const expanded = cols.map((_, i) => layout.expanded.has(i));
    const first = expanded.indexOf(true);
    const visible = layout.expanded.size;
    this.first = Math.max(0, first);
    // Every status and its count on the first line, the columns below it.
    const strip = this.strip(cols, expanded, width);
    const gridHeight = Math.max(3, height - 1);
    const grid: string[][] = Array.from({ length: gridHeight }, () => []);
    let left = width;
    // A board without tasks shows the columns that fit in full and no strips.
    const drawn = cols.map((_, i) => this.tasks.length > 0 || expanded[i]!);
    cols.forEach((status, ci) => {
      const tasks = this.column(status);
      if (!drawn[ci]) return;
      if (!expanded[ci]) {
        // A column left out (empty, or no room): a narrow strip with its short name and count.
        const w = STRIP;
        left -= w;
        const role = tasks.length ? statusRole(status) : "muted";
        const c = fg(role === "text" ? "border" : role);
        const b = fg("border");
        grid[0]!.push(`${b}┌${"─".repeat(w - 2)}┐{/}`);
        const name = (SHORT[status] ?? status).slice(0, w - 2);
        const lines = [name, String(tasks.length)];
        for (let r = 0; r < gridHeight - 2; r++) {
          const text = lines[r] ?? "";
          const padL = Math.floor((w - 2 - text.length) / 2);
          const cell = `${" ".repeat(padL)}${text}${" ".repeat(w - 2 - padL - text.length)}`;
          grid[r + 1]!.push(`${b}│{/}${r < lines.length ? `${c}${esc(cell)}{/}` : cell}${b}│{/}`);
        }
        grid[gridHeight - 1]!.push(`${b}└${"─".repeat(w - 2)}┘{/}`);
        return;
      }
      const restExpanded = expanded.slice(ci + 1).filter(Boolean).length;
      const restStrips = expanded.slice(ci + 1).filter((e, i) => !e && drawn[ci + 1 + i]).length;
      const w = restExpanded === 0 ? left - restStrips * STRIP : Math.floor((left - restStrips * STRIP) / (restExpanded + 1));
      left -= w;
      const active = ci === this.col;
      const row = Math.min(this.row.get(status) ?? 0, Math.max(0, tasks.length - 1));
      const c = fg(active ? "borderActive" : "border");
      // The header's label fits its column (a narrow column shortens the status's name).
      const full = ` ${status} (${tasks.length}) `;
      const label = full.length <= w - 3 ? full : ` ${SHORT[status] ?? status} (${tasks.length}) `.slice(0, Math.max(0, w - 3));
      grid[0]!.push(
        `${c}┌─{/}${fg(active ? "borderActive" : statusRole(status) === "text" ? "muted" : statusRole(status))}${esc(label)}{/}${c}${"─".repeat(Math.max(0, w - label.length - 3))}┐{/}`,
      );
      const inner = w - 2;
      const rows = gridHeight - 2;
      const body = this.cards(tasks, active ? row : -1, inner, rows);
      for (let r = 0; r < rows; r++) grid[r + 1]!.push(`${c}│{/}${body[r] ?? " ".repeat(inner)}${c}│{/}`);
      grid[gridHeight - 1]!.push(`${c}└${"─".repeat(Math.max(0, w - 2))}┘{/}`);
    });
    const hidden = cols.filter((_, i) => !expanded[i] && this.column(cols[i]!).length > 0).length;
    const before = this.tasks.length ? 0 : first;
    const after = this.tasks.length ? hidden : cols.length - first - visible;
    this.more = [before > 0 ? `◀ ${before}` : "", after > 0 ? (this.tasks.length ? `${after} with tasks as strips` : `${after} ▶`) : ""]
      .filter(Boolean)
      .join(" · ");
    this.board.setContent([strip, ...grid.map((r) => r.join(""))].join("\n"));
  }

  /**
   * One line naming every status with its task count (short names when the full ones do not
   * fit): the selected one inverse, the empty ones muted.
   */
  private strip(cols: TaskStatus[], expanded: boolean[], width: number): string {
    const variants: Array<[(s: TaskStatus) => string, string]> = [
      [(s) => s, "  "],
      [(s) => s, " "],
      [(s) => SHORT[s] ?? s, " "],
    ];
    let out = "";
    for (const [name, gap] of variants) {
      const items = cols.map((s, i) => {
        const n = this.column(s).length;
        const text = `${name(s)} ${n}`;
        const style = i === this.col && expanded[i] ? "{inverse}" : n === 0 ? fg("muted") : fg(statusRole(s));
        return { text, tagged: style ? `${style}${esc(text)}{/}` : esc(text) };
      });
      out = items.map((it) => it.tagged).join(gap);
      const w = items.reduce((n, it) => n + it.text.length, 0) + gap.length * (items.length - 1);
      if (w <= width) break;
    }
    return out;
  }

  /**
   * Which columns are drawn in full: those with tasks (and the selected one), as many as fit at
   * MIN_COLUMN each beside the strips of the rest, kept around the selected column. A board
   * without tasks shows its columns in full, from triage on, as many as fit.
   */
  private layout(cols: TaskStatus[], width: number): { expanded: Set<number> } {
    const nonEmpty = cols.map((s, i) => (this.column(s).length > 0 || i === this.col ? i : -1)).filter((i) => i >= 0);
    const candidates = this.tasks.length ? nonEmpty : cols.map((_, i) => i);
    let v = candidates.length;
    while (v > 1 && (width - STRIP * (cols.length - v)) / v < MIN_COLUMN) v--;
    // A window of v candidates that holds the selected column.
    const at = Math.max(0, candidates.indexOf(this.col));
    const start = Math.max(0, Math.min(at - Math.floor((v - 1) / 2), candidates.length - v));
    const chosen = candidates.slice(start, start + v);
    if (!this.tasks.length) {
      // The empty board: full columns only, scrolled to hold the selected one.
      const visible = Math.max(1, Math.min(cols.length, Math.floor(width / MIN_COLUMN)));
      this.first = Math.max(0, Math.min(this.first, this.col, cols.length - visible));
      if (this.col >= this.first + visible) this.first = this.col - visible + 1;
      return { expanded: new Set(cols.map((_, i) => i).slice(this.first, this.first + visible)) };
    }
    return { expanded: new Set(chosen) };
  }

  /** A column's cards: the title on up to two lines, then id · assignee · age; the selected card in view. */
  private cards(tasks: TaskSummary[], selected: number, inner: number, rows: number): string[] {
    const blocks = tasks.map((t, i) => {
      const title = `${t.held ? "[held] " : ""}${terminalText(t.title).replace(/\s+/g, " ")}`;
      const wrapped = wrapRuns([{ text: title, style: "" }], inner).map((l) => l.replace(/\{open\}/g, "{").replace(/\{close\}/g, "}"));
      const titleLines = wrapped.length > 2 ? [wrapped[0]!, truncate(wrapped.slice(1).join(""), inner)] : wrapped;
      // The age keeps its place at the right; the id and assignee give way first.
      const age = ago(t.created_at);
      const meta = `${pad(`${t.id} · ${t.assignee ?? "unassigned"}`, Math.max(1, inner - age.length - 1))} ${age}`;
      const sel = i === selected;
      const titleStyle = sel ? "{inverse}{bold}" : t.status === "running" ? fg("warn") : "{bold}";
      const lines = [
        ...titleLines.map((l) => `${titleStyle}${esc(pad(l.trimEnd(), inner))}{/}`),
        `${sel ? "{inverse}" : fg("muted")}${esc(pad(meta, inner))}{/}`,
      ];
      return lines;
    });
    // From the first card, or from where the selected card's block ends at the bottom.
    let top = 0;
    const heightOf = (from: number, to: number) => blocks.slice(from, to + 1).reduce((n, b) => n + b.length + 1, 0);
    if (selected >= 0) while (top < selected && heightOf(top, selected) - 1 > rows) top++;
    const out: string[] = [];
    for (let i = top; i < blocks.length && out.length < rows; i++) {
      if (out.length) out.push(" ".repeat(inner));
      out.push(...blocks[i]!);
    }
    if (top > 0 && out.length) out[0] = `${fg("muted")}${esc(pad(`↑ ${top} more`, inner))}{/}`;
    if (out.length > rows) {
      const shownCards = out.slice(0, rows);
      shownCards[rows - 1] = `${fg("muted")}${esc(pad("↓ more", inner))}{/}`;
      return shownCards;
    }
    return out;
  }

  sidebar(): string {
    const count = (s: TaskStatus) => this.tasks.filter((t) => t.status === s).length;
    return [
      `{bold}Board{/bold} ${esc(this.boardName || "…")}`,
      ...this.columns.map((s) => `${fg(statusRole(s))}●{/} ${pad(s, 10)} ${count(s)}`),
      "",
      this.more ? `${fg("muted")}more columns: ${esc(this.more)}{/}` : "",
      `${fg("muted")}c create · Enter detail · F1 keys{/}`,
    ].join("\n");
  }
}

/** A unified diff for the detail pane: escapes stripped (it is the model's text), coloured as the chat's diffs, cut to the width. */
export function diffPaneLines(text: string, width: number): string[] {
  return diffLines(terminalText(text).replace(/\n$/, "")).map((runs) => runs.map((r) => tagged({ ...r, text: truncate(r.text, Math.max(1, width)) })).join(""));
}
