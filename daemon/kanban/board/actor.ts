import type { ActorContext, ActorDefinition } from "../../actors/api.js";
import { Board, type BoardEnv } from "./board.js";
import { BoardStore } from "./store.js";

/**
 * The built-in `board` actor: one per board, keyed by the board's name (internal, like
 * `session`). Its tasks live in its KV (store.ts) and in memory while it is awake; it never
 * sleeps, so the dispatcher's queries are answered from memory. The daemon's KanbanService
 * holds the board object the actor hands it (`board` action); a RivetKit client with the
 * gateway token can read it with `list`, `show` and `stats`.
 */
export interface BoardState {
  name: string;
  createdAt: number;
}

export interface BoardVars {
  board: Board;
}

type BoardContext = ActorContext<BoardState, BoardVars>;

export function boardDefinition(envFor: (board: string) => BoardEnv, onWake: (board: Board) => void): ActorDefinition<BoardState, BoardVars, { name: string }> {
  return {
    createState: (_c, input) => ({ name: input.name, createdAt: Date.now() }),
    createVars: (c: BoardContext) => ({ board: new Board(c.state.name, new BoardStore(c.kv), envFor(c.state.name)) }),
    onWake: async (c: BoardContext) => {
      await c.vars.board.load();
      onWake(c.vars.board);
    },
    actions: {
      board: (c: BoardContext) => c.vars.board,
      list: (c: BoardContext, filter?: { all?: boolean }) => c.vars.board.list({ all: Boolean(filter?.all) }),
      show: (c: BoardContext, id: string) => c.vars.board.get(String(id)),
      stats: (c: BoardContext) => c.vars.board.stats(),
    },
    options: { noSleep: true, actionTimeout: 60_000 },
  };
}
