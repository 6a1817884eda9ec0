import type { ApprovalChoice, PendingApproval, PendingElicitation } from "../../shared/protocol/approvals.js";
import type { ElicitationAnswer } from "../widgets/elicitation-overlay.js";
import type { Widgets } from "blessed";
import type { Connection } from "../connection.js";
import type { Key } from "../widgets/input.js";

export type ViewId = "chat" | "sessions" | "kanban" | "actors" | "logs" | "profiles" | "channels";

export interface KeyHelp {
  keys: string;
  does: string;
}

/** What the status bar shows; the chat view fills in the session's numbers. */
export interface StatusInfo {
  profile: string;
  model: string;
  contextTokens: number;
  sessionTokens: number;
  workers: number | null;
  turnRunning: boolean;
  sessionId: string | null;
  /** Approval questions of this chat waiting for an answer. */
  approvalsWaiting: number;
}

/** What a view may ask of the app: the daemon link, dialogs, switching, redraws. */
export interface AppContext {
  readonly conn: Connection;
  readonly screen: Widgets.Screen;
  readonly home: string;
  readonly status: StatusInfo;
  requestRender(): void;
  /** A short message in the status line (errors in red). */
  flash(message: string, level?: "info" | "error"): void;
  /** A one-line question; `secret` shows the typed text as dots. */
  prompt(label: string, initial?: string, options?: { secret?: boolean }): Promise<string | null>;
  confirm(question: string): Promise<boolean>;
  /** The approval dialog; null when `signal` aborts first (answered elsewhere, timed out). */
  askApproval(approval: PendingApproval, signal: AbortSignal): Promise<{ choice: ApprovalChoice; reason?: string } | null>;
  /** An MCP server's elicitation dialog; null when `signal` aborts first (answered elsewhere, timed out). */
  askElicitation(elicitation: PendingElicitation, signal: AbortSignal): Promise<ElicitationAnswer | null>;
  switchView(id: ViewId): void;
  /** Open a session in the chat view. */
  openSession(sessionId: string): Promise<void>;
  /** Show or hide the status bar; returns whether it is now shown. */
  toggleStatusbar(): boolean;
  exit(): void;
}

/** One screen of the TUI. Views render and call RPC methods; they hold no business logic. */
export interface View {
  readonly id: ViewId;
  readonly title: string;
  readonly root: Widgets.BoxElement;
  /** Keys of this view, for the `?` overlay. */
  readonly keys: KeyHelp[];
  /** True while printable keys belong to the view (typing), so `?` and digits are not shortcuts. */
  typing(): boolean;
  handleKey(ch: string | undefined, key: Key): boolean;
  /** Called when the view becomes visible (load or refresh its data). */
  show(): void;
  hide?(): void;
  /** Tagged text for the sidebar while this view is shown. */
  sidebar?(): string;
  /** Draw before a screen render (virtual lists, sizes that depend on the terminal). */
  draw?(): void;
  /** The daemon came back after a restart. */
  reconnected?(): void;
}

/** The message of an error for the user. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
