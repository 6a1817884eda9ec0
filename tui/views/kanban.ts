import blessed from "blessed";
import type { Task, TaskStatus, TaskSummary, WorkerProcess } from "../../shared/protocol/kanban.js";
import { terminalText } from "../../shared/terminal-text.js";
import { ago, esc, pad, truncate, wrapRuns } from "../text.js";
import type { Key } from "../widgets/input.js";
import { TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** The board's columns, in workflow order (archived only on request). */
const COLUMNS: TaskStatus[] = ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done"];
const COLOR: Record<string, string> = { running: "yellow", blocked: "red", done: "green", ready: "cyan", review: "magenta", archived: "gray" };
const MIN_COLUMN = 20;
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
      this.detail.setLines([`{red-fg}${esc(errorText(error))}{/}`]);
    }
    this.app.requestRender();
  }

  private detailLines(t: Task): string[] {
    const w = this.detail.width;
    const para = (text: string, style = "") => wrapRuns([{ text: terminalText(text), style }], w);
    const time = (ms: number) => new Date(ms).toISOString().slice(5, 19).replace("T", " ");
    const section = (title: string) => ["", `{bold}{cyan-fg}${esc(title)}{/}`];
    const lines = [
      `{bold}${esc(terminalText(t.title))}{/bold}`,
      `{gray-fg}${esc(t.id)} · {/}{${COLOR[t.status] ?? "white"}-fg}${t.status}{/}{gray-fg} · ${esc(t.assignee ?? "unassigned")} · priority ${t.priority} · created ${ago(t.created_at)} ago{/}`,
    ];
    if (t.held) lines.push("{magenta-fg}held: not dispatched until released (R){/}");
    if (t.reason) lines.push(...para(`reason: ${t.reason}`, "{yellow-fg}"));
    if (t.parents.length || t.children.length)
      lines.push(`{gray-fg}parents ${esc(t.parents.join(", ") || "–")} · children ${esc(t.children.join(", ") || "–")}{/}`);
    if (t.consecutive_failures) lines.push(`{red-fg}${t.consecutive_failures} consecutive failures{/}`);
    lines.push(...section("Body"), ...(t.body.trim() ? para(t.body) : ["{gray-fg}(empty){/}"]));
    // The worker's completion: its short summary and, apart, the result it reported.
    if (t.summary) lines.push(...section("Summary"), ...para(t.summary));
    if (t.result) lines.push(...section("Result"), ...para(t.result));
    if (t.git) {
      const g = t.git;
      lines.push(...section("Worktree"));
      lines.push(
        `{gray-fg}branch{/} ${esc(g.branch ?? "(made when dispatched)")} {gray-fg}from ${esc(g.base_ref ?? "-")}${g.base ? ` ${esc(g.base.slice(0, 12))}` : ""}{/}`,
        `{gray-fg}path{/} ${esc(g.path ?? "-")}${g.removed ? " {gray-fg}(removed){/}" : ""}`,
      );
      if (g.work)
        lines.push(
          `{gray-fg}work{/} ${g.work.commits.length} commit(s), ${g.work.files_changed} file(s) {green-fg}+${g.work.insertions}{/} {red-fg}-${g.work.deletions}{/}`,
        );
      if (g.merged) lines.push(`{green-fg}merged into ${esc(g.merged.into)} ${esc(g.merged.commit.slice(0, 12))}{/}`);
      if (t.status === "review") lines.push("{magenta-fg}in review: V approves, J rejects with a reason{/}");
      lines.push(...section("Diff"), ...(this.detailDiff.trim() ? diffLines(this.detailDiff, w) : ["{gray-fg}no changes{/}"]));
    }
    lines.push(...section(`Comments (${t.comments.length})`));
    for (const c of t.comments) lines.push(`{gray-fg}${time(c.at)} ${esc(terminalText(c.author))}{/}`, ...para(`  ${c.body}`));
    lines.push(...section(`Runs (${t.runs.length})`));
    for (const r of t.runs)
      lines.push(
        `${esc(r.run_id)} ${esc(r.profile)} {${r.outcome === "running" ? "yellow" : r.outcome === "completed" ? "green" : "red"}-fg}${esc(r.outcome)}{/} {gray-fg}${time(r.started_at)}${r.ended_at ? ` → ${time(r.ended_at)}` : ""}${r.pid ? ` pid ${r.pid}` : ""}{/}${r.detail ? ` ${esc(terminalText(r.detail))}` : ""}`,
      );
    lines.push(...section(`Events (${t.events.length})`));
    for (const e of t.events.slice(-30))
      lines.push(
        `{gray-fg}${time(e.at)}{/} ${esc(e.type)} {gray-fg}by ${esc(e.by)}${e.data ? ` ${esc(truncate(terminalText(JSON.stringify(e.data)), w - 40))}` : ""}{/}`,
      );
    lines.push(...section("Worker log (last lines)"));
    lines.push(
      ...(this.detailLog.trim()
        ? terminalText(this.detailLog)
            .trimEnd()
            .split("\n")
            .map((l) => esc(truncate(l, w)))
        : ["{gray-fg}none{/}"]),
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
    if (key.name === "left" || ch === "h") this.col = Math.max(0, this.col - 1);
    else if (key.name === "right" || ch === "l") this.col = Math.min(cols.length - 1, this.col + 1);
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
    const head = `{bold}Running workers (${this.workers.length}){/bold}  {gray-fg}↑/↓ select · Enter detail · K kill · Esc back · every 2 s{/}`;
    if (!this.workers.length) return `${head}\n\n{gray-fg}no running workers{/}`;
    const cols = ["TASK", "PROFILE", "PID", "PROCS", "CPU%", "CPU", "RSS", "RUNTIME", "HEARTBEAT", "LOG"];
    const rows = this.workers.map((w) => [
      w.task_id,
      w.profile,
      String(w.pid),
      String(w.processes),
      w.cpu_percent.toFixed(1),
      `${w.cpu_seconds.toFixed(1)}s`,
      sizeText(w.rss_bytes),
      ago(w.started_at),
      `${ago(w.last_heartbeat)} ago`,
      sizeText(w.log_bytes),
    ]);
    const widths = cols.map((c, i) => Math.max(c.length, ...rows.map((r) => r[i]!.length)));
    const line = (cells: string[]) => cells.map((c, i) => pad(c, widths[i]!)).join("  ");
    const used = widths.reduce((n, x) => n + x + 2, 0);
    const out = [head, "", `{gray-fg}${esc(line(cols))}  TITLE{/}`];
    rows.forEach((r, i) => {
      const text = esc(`${line(r)}  ${truncate(terminalText(this.workers[i]!.title), Math.max(0, width - used))}`);
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
      this.board.setContent("{gray-fg}The daemon has no kanban board.{/}");
      return;
    }
    const cols = this.columns;
    const visible = Math.max(1, Math.min(cols.length, Math.floor(width / MIN_COLUMN)));
    // Columns scroll by as few as needed to keep the selected one in view, from triage on.
    this.first = Math.max(0, Math.min(this.first, this.col, cols.length - visible));
    if (this.col >= this.first + visible) this.first = this.col - visible + 1;
    const first = this.first;
    const shown = cols.slice(first, first + visible);
    const cw = Math.floor(width / shown.length);
    // Every status and its count on the first line, whatever fits as columns below.
    const strip = this.strip(cols, first, visible, width);
    const gridHeight = Math.max(3, height - 1);
    const grid: string[][] = Array.from({ length: gridHeight }, () => []);
    shown.forEach((status, ci) => {
      const w = ci === shown.length - 1 ? width - cw * (shown.length - 1) : cw;
      const tasks = this.column(status);
      const active = first + ci === this.col;
      const row = Math.min(this.row.get(status) ?? 0, Math.max(0, tasks.length - 1));
      const color = active ? "cyan" : "gray";
      // The header's label fits its column (a narrow column shortens the status's name).
      const full = ` ${status} (${tasks.length}) `;
      const label = full.length <= w - 3 ? full : ` ${SHORT[status] ?? status} (${tasks.length}) `.slice(0, Math.max(0, w - 3));
      grid[0]!.push(`{${color}-fg}┌─${esc(label)}${"─".repeat(Math.max(0, w - label.length - 3))}┐{/}`);
      const inner = w - 2;
      const rows = gridHeight - 2;
      // Two lines a card: the title, then the id and assignee.
      const cards = Math.max(1, Math.floor(rows / 2));
      const top = Math.max(0, row - cards + 1);
      for (let r = 0; r < rows; r++) {
        const t = r < cards * 2 ? tasks[top + Math.floor(r / 2)] : undefined;
        let cell = " ".repeat(inner);
        if (t) {
          const title = `${t.held ? "[held] " : ""}${terminalText(t.title).replace(/\s+/g, " ")}`;
          const text = r % 2 === 0 ? title : `${t.id} · ${t.assignee ?? "unassigned"}`;
          const body = esc(pad(text, inner));
          const selected = active && top + Math.floor(r / 2) === row;
          const style = selected ? "{inverse}" : r % 2 === 1 ? "{gray-fg}" : t.status === "running" ? "{yellow-fg}" : "";
          cell = style ? `${style}${body}{/}` : body;
        }
        grid[r + 1]!.push(`{${color}-fg}│{/}${cell}{${color}-fg}│{/}`);
      }
      grid[gridHeight - 1]!.push(`{${color}-fg}└${"─".repeat(Math.max(0, w - 2))}┘{/}`);
    });
    this.more = [first > 0 ? `◀ ${first}` : "", first + visible < cols.length ? `${cols.length - first - visible} ▶` : ""].filter(Boolean).join(" · ");
    this.board.setContent([strip, ...grid.map((r) => r.join(""))].join("\n"));
  }

  /**
   * One line naming every status with its task count (short names when the full ones do not
   * fit): the selected one inverse, those scrolled out of view gray, arrows where columns are.
   */
  private strip(cols: TaskStatus[], first: number, visible: number, width: number): string {
    const left = first > 0 ? "◀ " : "";
    const right = first + visible < cols.length ? " ▶" : "";
    const variants: Array<[(s: TaskStatus) => string, string]> = [
      [(s) => s, "  "],
      [(s) => s, " "],
      [(s) => SHORT[s] ?? s, " "],
    ];
    let out = "";
    for (const [name, gap] of variants) {
      const items = cols.map((s, i) => {
        const text = `${name(s)} ${this.column(s).length}`;
        const style = i === this.col ? "{inverse}" : i < first || i >= first + visible ? "{gray-fg}" : `{${COLOR[s] ?? "white"}-fg}`;
        return { text, tagged: `${style}${esc(text)}{/}` };
      });
      out = `{gray-fg}${left}{/}${items.map((it) => it.tagged).join(gap)}{gray-fg}${right}{/}`;
      const w = left.length + right.length + items.reduce((n, it) => n + it.text.length, 0) + gap.length * (items.length - 1);
      if (w <= width) break;
    }
    return out;
  }

  sidebar(): string {
    const count = (s: TaskStatus) => this.tasks.filter((t) => t.status === s).length;
    return [
      `{bold}Board{/bold} ${esc(this.boardName || "…")}`,
      ...this.columns.map((s) => `{${COLOR[s] ?? "white"}-fg}●{/} ${pad(s, 10)} ${count(s)}`),
      "",
      this.more ? `{gray-fg}more columns: ${esc(this.more)}{/}` : "",
      "{gray-fg}c create · Enter detail · F1 keys{/}",
    ].join("\n");
  }
}

function sizeText(n: number): string {
  return n < 1024 ? `${n} B` : n < 1024 ** 2 ? `${(n / 1024).toFixed(1)} KiB` : `${(n / 1024 ** 2).toFixed(1)} MiB`;
}

/** A unified diff for the detail pane: escapes stripped (it is the model's text), added lines green, removed red, hunks cyan. */
export function diffLines(text: string, width: number): string[] {
  return terminalText(text)
    .replace(/\n$/, "")
    .split("\n")
    .map((l) => {
      const body = esc(truncate(l, Math.max(1, width)));
      if (/^(diff --git|index |\+\+\+ |--- )/.test(l)) return `{bold}${body}{/bold}`;
      if (l.startsWith("@@")) return `{cyan-fg}${body}{/}`;
      if (l.startsWith("+")) return `{green-fg}${body}{/}`;
      if (l.startsWith("-")) return `{red-fg}${body}{/}`;
      return body;
    });
}
