import { fg } from "../theme.js";
import type { McpServerInfo } from "../../shared/protocol/mcp.js";
import blessed from "blessed";
import type { ProfileInfo, ProfileSummary } from "../../shared/protocol/profiles.js";
import type { BundleInfo, SkillInfo } from "../../shared/protocol/skills.js";
import { terminalText } from "../../shared/terminal-text.js";
import { esc, wrapRuns } from "../text.js";
import type { Key } from "../widgets/input.js";
import { SelectList, TextPane } from "../widgets/select-list.js";
import { type AppContext, errorText, type KeyHelp, type View } from "./view.js";

/** Profiles: each with its description, model, skills, and the home's skill bundles. */
export class ProfilesView implements View {
  readonly id = "profiles" as const;
  readonly title = "Profiles";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [
    { keys: "↑/↓, j/k", does: "select a profile" },
    { keys: "Enter, Tab", does: "move into the details to scroll them (Tab or Esc back)" },
    { keys: "u", does: "make it the active profile (for commands without --profile)" },
    { keys: "e", does: "edit its description" },
    { keys: "r", does: "refresh" },
  ];
  private readonly list: SelectList<ProfileSummary>;
  private readonly detail: TextPane;
  private current = "default";
  private bundles: BundleInfo[] = [];
  private inDetail = false;

  constructor(private readonly app: AppContext) {
    this.root = blessed.box({ width: "100%", height: "100%" });
    this.list = new SelectList<ProfileSummary>(
      { parent: this.root, top: 0, left: 0, width: "35%", height: "100%", label: " Profiles " },
      (p) =>
        `${p.active ? "● " : "  "}${p.name}${p.name === this.current ? " (this TUI)" : ""}${p.distribution ? `  ${p.distribution.name}@${p.distribution.version}` : ""}`,
    );
    this.detail = new TextPane({ parent: this.root, top: 0, left: "35%", width: "65%", height: "100%", label: " Profile " });
  }

  typing(): boolean {
    return false;
  }

  show(): void {
    void this.load();
  }

  reconnected(): void {
    if (this.root.visible) void this.load();
  }

  private async load(): Promise<void> {
    try {
      const [r, b] = await Promise.all([this.app.conn.call("profile.list", {}), this.app.conn.call("bundles.list", {}).catch(() => null)]);
      this.current = r.current;
      this.bundles = b?.bundles ?? [];
      this.list.setItems(r.profiles, (a, c) => a.name === c.name);
      await this.loadDetail();
    } catch (error) {
      this.app.flash(`profiles: ${errorText(error)}`, "error");
    }
    this.app.requestRender();
  }

  private async loadDetail(): Promise<void> {
    const p = this.list.selected;
    if (!p) return;
    try {
      const [info, skills, mcp] = await Promise.all([
        this.app.conn.call("profile.show", { name: p.name }),
        this.app.conn.call("skills.list", { profile: p.name }).catch(() => null),
        this.app.conn.call("mcp.list", { profile: p.name }).catch((e) => errorText(e)),
      ]);
      if (this.list.selected?.name !== p.name) return;
      this.detail.setLines([...this.detailLines(info, skills?.skills ?? [], skills?.warnings ?? []), ...mcpLines(mcp)]);
    } catch (error) {
      this.detail.setLines([`${fg("error")}${esc(errorText(error))}{/}`]);
    }
    this.app.requestRender();
  }

  private detailLines(info: ProfileInfo, skills: SkillInfo[], warnings: string[]): string[] {
    const w = this.detail.width;
    const para = (text: string, style = "") => wrapRuns([{ text: terminalText(text), style }], w);
    const lines = [`{bold}${esc(info.name)}{/bold}${info.active ? ` ${fg("ok")}(active){/}` : ""}`];
    lines.push(...para(info.description ?? "no description (e sets one)", info.description ? "" : `${fg("muted")}`));
    if (info.description_auto) lines.push(`${fg("muted")}(written by the model){/}`);
    lines.push("", `{bold}${fg("accent")}Model{/}`);
    lines.push(
      info.model.model
        ? esc(`${info.model.provider ?? ""} ${info.model.model}`)
        : `${fg("warn")}${esc(terminalText(info.model.problem ?? "not configured"))}{/}`,
    );
    if (info.distribution) {
      const d = info.distribution;
      lines.push(
        "",
        `{bold}${fg("accent")}Distribution{/}`,
        esc(`${d.name}@${d.version}${d.author ? ` by ${d.author}` : ""}`),
        `${fg("muted")}${esc(d.source ?? "")}{/}`,
      );
    }
    lines.push("", `{bold}${fg("accent")}Skills (${skills.length}){/}`);
    if (!skills.length) lines.push(`${fg("muted")}none (add folders with a SKILL.md to ${esc(info.paths.skills)}){/}`);
    for (const s of skills)
      lines.push(
        ...wrapRuns(
          [
            { text: `/${s.slug}  `, style: `${fg("warn")}` },
            { text: terminalText(s.description), style: "" },
          ],
          w,
        ),
      );
    for (const warn of warnings) lines.push(`${fg("error")}${esc(terminalText(warn))}{/}`);
    lines.push("", `{bold}${fg("accent")}Bundles (${this.bundles.length}){/}`);
    const have = new Set(skills.map((s) => s.slug));
    for (const b of this.bundles) {
      const parts = b.skills.map((s) => (have.has(s) ? s : `${s}?`)).join(", ");
      lines.push(
        ...wrapRuns(
          [
            { text: `/${b.slug}  `, style: `${fg("warn")}` },
            { text: `${terminalText(b.description)} [${parts}]`, style: "" },
          ],
          w,
        ),
      );
    }
    if (!this.bundles.length) lines.push(`${fg("muted")}none{/}`);
    lines.push("", `{bold}${fg("accent")}Paths{/}`, `${fg("muted")}${esc(info.dir)}{/}`, info.alias ? `${fg("muted")}alias ${esc(info.alias)}{/}` : "");
    return lines;
  }

  handleKey(ch: string | undefined, key: Key): boolean {
    if (this.inDetail) {
      if (key.name === "tab" || key.name === "escape") {
        this.focusDetail(false);
        return true;
      }
      if (this.detail.handleKey(ch, key)) return true;
    } else {
      if (this.list.handleKey(ch, key)) {
        void this.loadDetail();
        return true;
      }
      if (key.name === "return" || key.name === "tab") {
        this.focusDetail(true);
        return true;
      }
    }
    const p = this.list.selected;
    if (ch === "r") void this.load();
    else if (ch === "u" && p) {
      void this.app.conn
        .call("profile.use", { name: p.name })
        .then(() => {
          this.app.flash(`${p.name} is now the active profile`);
          return this.load();
        })
        .catch((e) => this.app.flash(errorText(e), "error"));
    } else if (ch === "e" && p) {
      void this.app.prompt(`Description of ${p.name}`, p.description ?? "").then(async (text) => {
        if (text === null) return;
        await this.app.conn.call("profile.describe", { name: p.name, text }).catch((e) => this.app.flash(errorText(e), "error"));
        await this.load();
      });
    } else return false;
    return true;
  }

  private focusDetail(on: boolean): void {
    this.inDetail = on;
    this.list.focused = !on;
    this.detail.focused = on;
  }

  draw(): void {
    this.list.draw();
    this.detail.draw();
  }
}

/** The profile's MCP servers: state, tool count, last error (`agent mcp list -p <profile>`). */
function mcpLines(mcp: { servers: McpServerInfo[] } | string): string[] {
  if (typeof mcp === "string") return ["", `{bold}${fg("accent")}MCP servers{/}`, `${fg("error")}${esc(terminalText(mcp))}{/}`];
  const lines = ["", `{bold}${fg("accent")}MCP servers (${mcp.servers.length}){/}`];
  if (!mcp.servers.length) lines.push(`${fg("muted")}none (agent mcp add <name> -- <command>){/}`);
  for (const s of mcp.servers) {
    const role = s.state === "failed" ? "error" : s.state === "ready" ? "ok" : "muted";
    lines.push(`${esc(s.name)}  ${fg(role)}${s.state}{/}${s.state === "ready" ? ` ${s.tools} tools` : ""}  ${fg("muted")}${s.transport}{/}`);
    if (s.last_error) lines.push(`  ${fg("error")}${esc(terminalText(s.last_error))}{/}`);
  }
  return lines;
}
