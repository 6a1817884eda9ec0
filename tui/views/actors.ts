import { fg, type Role } from "../theme.js";
import blessed from "blessed";
import { InspectorClient, type InspectorTraces, type WorkflowHistory } from "../../shared/client/inspector.js";
import type { ActorModuleView, ActorRecordView } from "../../shared/protocol/actors.js";
import { terminalText } from "../../shared/terminal-text.js";
import { ago, esc, truncate } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import { jsonTree } from "../widgets/tree.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";
import { envValue } from "../../shared/config/env.js";

const STATE_ROLE: Record<string, Role> = { running: "ok", sleeping: "muted", starting: "warn", crashed: "error", destroyed: "muted" };

/** Actors: every live actor by name, and an inspector of the selected one. */
export class ActorsView implements View {
  readonly id = "actors" as const;
  readonly title = "Actors";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k", does: "select an actor (the inspector follows)" },
    { keys: "Enter, Tab", does: "move into the inspector to scroll it (Tab or Esc back)" },
    { keys: "c", does: "call one of the actor's actions (asks for the name and the JSON arguments)" },
    { keys: "n", does: "create an actor (asks for the name and key)" },
    { keys: "x", does: "destroy the actor (asks first; a built-in is refused, read-only here)" },
    { keys: "w", does: "replay the actor's workflow from the start (asks first)" },
    { keys: "/", does: "filter by name" },
    { keys: "r", does: "refresh" },
  ];
  private readonly list: SelectList<ActorRecordView>;
  private readonly inspector: TextPane;
  private modules: ActorModuleView[] = [];
  private definitions: string[] = [];
  private all: ActorRecordView[] = [];
  private filter = "";
  private inInspector = false;
  private inspected: string | null = null;
  private events: string[] = [];
  private refreshTimer: NodeJS.Timeout | null = null;
  private lastOutput: string | null = null;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<ActorRecordView>(
      { parent: this.root, top: 0, left: 0, width: "40%", height: "100%", label: " Actors " },
      (a) => `${a.name}${a.builtin ? " (built-in)" : ""}  ${a.key === "/" ? "" : a.key}  ${a.state}  ${a.actor_id}`,
      (a) => fg(STATE_ROLE[a.state] ?? "text"),
    );
    this.list.empty = "no live actors (agent actors new counter; agent actors create counter)";
    this.inspector = new TextPane({ parent: this.root, top: 0, left: "40%", width: "60%", height: "100%", label: " Inspector " });
    app.conn.on("event", (e: { topic: string; data: { actorId?: string; event?: string; args?: unknown } }) => {
      if (!e.topic.startsWith("actor.") || !this.root.visible) return;
      if (e.topic === "actor.broadcast" && e.data.actorId === this.inspected) {
        this.events.push(`${new Date().toISOString().slice(11, 19)} ${e.data.event} ${truncate(JSON.stringify(e.data.args ?? []), 80)}`);
        if (this.events.length > 50) this.events.shift();
      }
      this.scheduleRefresh();
    });
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    void this.app.conn.subscribe(["actor"]).catch(() => undefined);
    void this.load();
  }

  hide(): void {
    void this.app.conn.unsubscribe(["actor"]);
  }

  reconnected(): void {
    if (this.root.visible) void this.load();
  }

  private scheduleRefresh(): void {
    if (this.refreshTimer) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = null;
      void this.load();
    }, 300);
  }

  private async load(): Promise<void> {
    try {
      const r = await this.app.conn.call("actors.list", {});
      this.all = r.actors.sort((a, b) => a.name.localeCompare(b.name) || b.create_ts - a.create_ts);
      this.modules = r.modules;
      this.definitions = r.definitions;
      this.applyFilter();
      await this.inspect();
    } catch (error) {
      this.app.flash(`actors: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private applyFilter(): void {
    const f = this.filter.toLowerCase();
    this.list.setItems(f ? this.all.filter((a) => a.name.toLowerCase().includes(f)) : this.all, (a, b) => a.actor_id === b.actor_id);
    this.list.box.setLabel(f ? ` Actors named *${this.filter}* ` : ` Actors (${this.all.length}) `);
  }

  private async inspect(): Promise<void> {
    const a = this.list.selected;
    const w = this.inspector.width;
    if (!a) {
      this.inspector.setLines(this.overview());
      return;
    }
    if (this.inspected !== a.actor_id) this.events = [];
    const same = this.inspected === a.actor_id;
    this.inspected = a.actor_id;
    const lines: string[] = [
      `{bold}${esc(a.name)}{/bold} ${fg("muted")}key{/} ${esc(a.key)}  ${fg(STATE_ROLE[a.state] ?? "text")}● ${esc(a.state)}{/}`,
      `${fg("muted")}id ${esc(a.actor_id)} · created ${ago(a.create_ts)} ago · crash policy ${a.crash_policy}${a.sleep_ts ? ` · asleep ${ago(a.sleep_ts)}` : ""}{/}`,
    ];
    if (a.error) lines.push(`${fg("error")}error: ${esc(terminalText(JSON.stringify(a.error)))}{/}`);
    if (a.builtin) lines.push(`${fg("muted")}built-in: read-only here{/}`);
    const status = await this.app.conn.call("daemon.status", {}).catch(() => null);
    // The gateway hides the product's own actors from a caller without the gateway token: for a
    // built-in the inspector is then read over the socket only (state and log), never "not found".
    const gatewayFor = !a.builtin || Boolean(envValue("AGENT_GATEWAY_TOKEN"));
    const gateway = status?.gateway_url && gatewayFor ? new InspectorClient(status.gateway_url) : null;
    const [summary, queue, traces, state, logs] = await Promise.all([
      gateway
        ? gateway.summary(a.actor_id).catch((e: Error) => e)
        : Promise.resolve(a.builtin && status?.gateway_url ? null : new Error("the gateway is not listening")),
      gateway ? gateway.queue(a.actor_id, 20).catch((e: Error) => e) : Promise.resolve(null),
      gateway ? gateway.traces(a.actor_id, 200).catch((e: Error) => e) : Promise.resolve(null),
      this.app.conn.call("actors.state", { actorId: a.actor_id }).catch((e: Error) => e),
      this.app.conn.call("actors.logs", { actorId: a.actor_id, limit: 15 }).catch(() => null),
    ]);
    const section = (title: string) => lines.push("", `{bold}${fg("accent")}${title}{/}`);
    section("State");
    if (state instanceof Error) lines.push(`${fg("error")}${esc(state.message)}{/}`);
    else lines.push(...jsonTree(state.state, w));
    if (summary === null) {
      section("Built-in");
      const [what, command] = builtinNote(a);
      lines.push(`${fg("muted")}holds ${esc(what)}{/}`, `${fg("muted")}managed with: ${esc(command)}{/}`);
    } else if (summary instanceof Error) {
      section("Inspector");
      lines.push(`${fg("muted")}${esc(summary.message)}{/}`);
      if (/not.found|unauthorized/i.test(summary.message))
        lines.push(`${fg("muted")}(built-in actors need AGENT_GATEWAY_TOKEN; a production inspector needs AGENT_INSPECTOR_TOKEN){/}`);
    } else {
      section(`Connections (${summary.connections.length})`);
      if (!summary.connections.length) lines.push(`${fg("muted")}none{/}`);
      for (const c of summary.connections)
        lines.push(`${esc(c.id)}  ${esc(c.type)}  ${fg("muted")}${esc(truncate(JSON.stringify(c.details ?? null), w - 30))}{/}`);
      section(`Actions (${summary.rpcs.length}) · c calls one`);
      lines.push(esc(summary.rpcs.join("  ")) || `${fg("muted")}none{/}`);
      if (this.lastOutput) lines.push(`${fg("muted")}last call →{/} ${esc(truncate(this.lastOutput, w - 12))}`);
      section(`Queue (${summary.queueSize})`);
      if (queue && !(queue instanceof Error)) {
        for (const m of queue.messages) lines.push(`#${esc(m.id)} ${esc(m.name)} ${fg("muted")}${ago(m.createdAtMs)} ago{/}`);
        if (queue.truncated) lines.push(`${fg("muted")}… ${queue.size - queue.messages.length} more{/}`);
        if (!queue.messages.length) lines.push(`${fg("muted")}empty{/}`);
      }
      section("Traces");
      lines.push(...(traces && !(traces instanceof Error) ? timeline(traces, w) : [`${fg("muted")}none{/}`]));
      section("Workflow history");
      lines.push(...(summary.isWorkflowEnabled ? workflowLines(summary.workflowHistory, w) : [`${fg("muted")}no workflow{/}`]));
    }
    if (this.events.length) {
      section("Broadcasts");
      lines.push(...this.events.map((e) => esc(terminalText(e))));
    }
    section("Log");
    const logLines = logs?.lines ?? [];
    if (!logLines.length) lines.push(`${fg("muted")}none{/}`);
    for (const l of logLines)
      lines.push(`${fg("muted")}${new Date(l.ts).toISOString().slice(11, 19)}{/} ${esc(l.level)} ${esc(truncate(terminalText(l.msg), w - 16))}`);
    if (this.list.selected?.actor_id === a.actor_id) this.inspector.setLines(lines, same);
  }

  private overview(): string[] {
    const lines = ["{bold}Definitions{/bold}", esc(this.definitions.join("  ")) || `${fg("muted")}none{/}`, "", "{bold}Modules{/bold}"];
    for (const m of this.modules)
      lines.push(m.ok ? `${fg("ok")}✓{/} ${esc(m.file)}` : `${fg("error")}✗ ${esc(m.file)}: ${esc(terminalText(m.error ?? ""))}{/}`);
    if (!this.modules.length) lines.push(`${fg("muted")}none in $AGENT_HOME/actors/{/}`);
    return lines;
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.inInspector) {
      if (key.name === "tab" || key.name === "escape") {
        this.setInspectorFocus(false);
        return true;
      }
      if (this.inspector.handleKey(ch, key)) return true;
    } else {
      if (this.list.handleKey(ch, key)) {
        this.lastOutput = null;
        void this.inspect().then(() => this.app.requestRender());
        return true;
      }
      if (key.name === "return" || key.name === "tab") {
        this.setInspectorFocus(true);
        return true;
      }
    }
    const a = this.list.selected;
    if (ch === "r") void this.load();
    else if (ch === "/") {
      void this.app.prompt("Filter actors by name", this.filter).then((f) => {
        if (f === null) return;
        this.filter = f.trim();
        this.applyFilter();
        void this.inspect().then(() => this.app.requestRender());
      });
    } else if ((ch === "c" || ch === "w") && a?.builtin) this.app.flash(`${a.name} is a built-in actor, read-only here: use ${builtinNote(a)[1]}`, "error");
    else if (ch === "c" && a) void this.callAction(a);
    else if (ch === "n") void this.create();
    else if (ch === "x" && a?.builtin) {
      // The daemon refuses to destroy a built-in and names the command that owns its data.
      void this.app.conn
        .call("actors.destroy", { actorId: a.actor_id })
        .then(() => this.load())
        .catch((e) => this.app.flash(errorText(e), "error"));
    } else if (ch === "x" && a) {
      void this.app.confirm(`Destroy actor ${a.name} (${a.actor_id})? Its state is deleted.`).then(async (yes) => {
        if (!yes) return;
        await this.app.conn.call("actors.destroy", { actorId: a.actor_id }).catch((e) => this.app.flash(errorText(e), "error"));
        await this.load();
      });
    } else if (ch === "w" && a) {
      void this.app.confirm(`Replay the workflow of ${a.name} from the start?`).then(async (yes) => {
        if (!yes) return;
        const status = await this.app.conn.call("daemon.status", {});
        if (!status.gateway_url) return this.app.flash("the gateway is not listening", "error");
        await new InspectorClient(status.gateway_url).replay(a.actor_id).catch((e) => this.app.flash(errorText(e), "error"));
        await this.load();
      });
    } else return false;
    return true;
  }

  private setInspectorFocus(on: boolean): void {
    this.inInspector = on;
    this.list.focused = !on;
    this.inspector.focused = on;
  }

  private async callAction(a: ActorRecordView): Promise<void> {
    const action = await this.app.prompt(`Action of ${a.name} to call`);
    if (!action?.trim()) return;
    const raw = await this.app.prompt(`Arguments for ${action.trim()} (a JSON array)`, "[]");
    if (raw === null) return;
    let args: unknown[];
    try {
      const parsed = JSON.parse(raw.trim() || "[]");
      args = Array.isArray(parsed) ? parsed : [parsed];
    } catch (error) {
      this.app.flash(`not JSON: ${errorText(error)}`, "error");
      return;
    }
    try {
      const { output } = await this.app.conn.call("actors.call", { actorId: a.actor_id, action: action.trim(), args });
      this.lastOutput = terminalText(JSON.stringify(output) ?? "undefined");
      this.app.flash(`${action.trim()} → ${truncate(this.lastOutput, 60)}`);
    } catch (error) {
      this.lastOutput = `error: ${errorText(error)}`;
      this.app.flash(errorText(error), "error");
    }
    await this.load();
  }

  private async create(): Promise<void> {
    const name = await this.app.prompt(`Create an actor: name (${this.definitions.join(", ") || "no definitions"})`);
    if (!name?.trim()) return;
    const key = await this.app.prompt("Key (empty for a random one)");
    if (key === null) return;
    try {
      const rec = await this.app.conn.call("actors.create", { name: name.trim(), ...(key.trim() ? { key: key.trim() } : {}) });
      this.app.flash(`created ${rec.name} ${rec.actor_id}`);
      await this.load();
      const i = this.list.items.findIndex((x) => x.actor_id === rec.actor_id);
      if (i >= 0) this.list.index = i;
      await this.inspect();
    } catch (error) {
      this.app.flash(errorText(error), "error");
    }
  }

  draw(): void {
    this.list.draw();
    this.inspector.draw();
  }
}

/** What a built-in actor holds, and the command that manages it. */
function builtinNote(a: ActorRecordView): [what: string, command: string] {
  switch (a.name) {
    case "board":
      return [`the tasks of kanban board "${a.key}"`, `agent kanban boards delete ${a.key}`];
    case "cron":
      return [`the cron jobs of profile "${a.key}"`, `agent cron list -p ${a.key}`];
    case "session":
      return [`chat session ${a.key}`, `agent sessions show ${a.key}`];
    default:
      return ["data of the product", "its feature's commands"];
  }
}

/** Spans as a timeline: a bar per span, placed by start and scaled by duration. */
function timeline(traces: InspectorTraces, width: number): string[] {
  const spans = traces.otlp.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans));
  if (!spans.length) return [`${fg("muted")}none recorded{/}`];
  const recent = spans.sort((a, b) => Number(BigInt(a.startTimeUnixNano) - BigInt(b.startTimeUnixNano))).slice(-20);
  const t0 = Number(BigInt(recent[0]!.startTimeUnixNano) / 1000n) / 1000;
  const t1 = Math.max(...recent.map((s) => Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000));
  const span = Math.max(1, t1 - t0);
  const nameW = 22;
  const barW = Math.max(10, width - nameW - 14);
  return recent.map((s) => {
    const start = Number(BigInt(s.startTimeUnixNano) / 1000n) / 1000;
    const end = Number(BigInt(s.endTimeUnixNano) / 1000n) / 1000;
    const from = Math.floor(((start - t0) / span) * barW);
    const len = Math.max(1, Math.round(((end - start) / span) * barW));
    const failed = s.status?.code === 2;
    const bar = `${" ".repeat(from)}${"█".repeat(Math.min(len, barW - from))}`;
    const ms = end - start;
    return `${esc(truncate(s.name, nameW).padEnd(nameW))} ${fg(failed ? "error" : "ok")}${bar}{/}${" ".repeat(Math.max(0, barW - bar.length))} ${fg("muted")}${ms < 1 ? ms.toFixed(2) : Math.round(ms)} ms{/}`;
  });
}

function workflowLines(history: WorkflowHistory | null, width: number): string[] {
  if (!history?.entries.length) return [`${fg("muted")}no entries yet{/}`];
  return history.entries.map((e) => {
    const meta = history.entryMetadata[e.id] ?? {};
    const kind = typeof e.kind === "string" ? e.kind : (Object.keys(e.kind)[0] ?? "entry");
    const where = typeof e.location === "string" ? e.location : JSON.stringify(e.location);
    const color: Role = meta.status === "completed" ? "ok" : meta.status === "failed" ? "error" : "warn";
    const err = meta.error ? ` ${fg("error")}${esc(truncate(terminalText(String(meta.error)), 40))}{/}` : "";
    return `${fg(color)}●{/} ${esc(kind.padEnd(7))} ${esc(truncate(where, width - 40))} ${fg("muted")}${esc(meta.status ?? "")}${meta.attempts ? ` ×${meta.attempts}` : ""}{/}${err}`;
  });
}
