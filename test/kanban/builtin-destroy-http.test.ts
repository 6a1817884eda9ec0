// `DELETE /actors/<id>` on the gateway, with the gateway token (a trusted caller, who sees the
// product's own actors): destroying a kanban board actor is refused as `actors destroy` is over
// RPC (403 actor.builtin_refused, naming the kanban command), and every task stays. A user
// actor is still destroyed.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type KanbanHome, kanbanHome, TOKEN } from "./board-helpers.js";

let h: KanbanHome;
let base = "";

test.before(async () => {
  h = await kanbanHome();
  base = (await h.json(["daemon", "status"])).gateway_url;
});
test.after(async () => {
  await h.dispose();
});

const del = async (id: string) => {
  const res = await fetch(`${base}/actors/${id}`, { method: "DELETE", headers: { authorization: `Bearer ${TOKEN}` } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
};

test("DELETE /actors/<board actor> with the token is refused (403 actor.builtin_refused) and every task stays", async () => {
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push(await h.create(`task ${i}`, "--triage"));
  const board = (await h.json(["actors", "list", "--name", "board"])).actors[0];
  assert.ok(board?.builtin, JSON.stringify(board));
  const r = await del(board.actor_id);
  assert.is(r.status, 403, JSON.stringify(r.body));
  assert.match(r.body.code, /builtin_refused$/);
  assert.match(r.body.message, /agent kanban boards delete default/);
  const listed = (await h.json(["kanban", "list", "--all"])).tasks.map((t: { id: string }) => t.id).sort();
  assert.equal(listed, [...ids].sort());
  assert.is((await h.json(["actors", "list", "--name", "board"])).actors[0]?.actor_id, board.actor_id);
});

test.run();
