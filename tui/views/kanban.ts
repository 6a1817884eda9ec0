import blessed from "blessed";
import type { Key } from "../widgets/input.js";
import type { AppContext, KeyHelp, View } from "./view.js";

/** The kanban board (columns by status). Filled in when the board's protocol is available. */
export class KanbanView implements View {
  readonly id = "kanban" as const;
  readonly title = "Kanban";
  readonly root: blessed.Widgets.BoxElement;
  readonly keys: KeyHelp[] = [];

  constructor(readonly app: AppContext) {
    this.root = blessed.box({
      width: "100%",
      height: "100%",
      tags: true,
      border: { type: "line" },
      label: " Kanban ",
      content: "The kanban board is not available in this build.",
    });
  }

  typing(): boolean {
    return false;
  }

  show(): void {}

  handleKey(_ch: string | undefined, _key: Key): boolean {
    return false;
  }
}
