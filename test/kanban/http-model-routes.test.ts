// The dashboard API's two routes that call the model, over real HTTP as the dashboard calls them:
// POST tasks/<id>/decompose (the decomposer's slot) and POST profiles/<name>/describe-auto (the
// describer's). The fake model answers both; no worker runs (kanban.max_in_progress: 0).
import { test } from "uvu";
import * as assert from "uvu/assert";
import { TOKEN } from "./board-helpers.js";
import { type KanbanHome, kanbanHome } from "./dispatch-helpers.js";

let h: KanbanHome;
let base = "";

test.before(async () => {
  h = await kanbanHome({ max_in_progress: 0 }, "", { AGENT_GATEWAY_TOKEN: TOKEN });
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  base = (await h.call("daemon.status", {})).gateway_url!;
  assert.ok(base, "the gateway listens");
});
test.after(async () => {
  await h.dispose();
});

async function api(method: string, path: string, body?: unknown, token = TOKEN): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/api/plugins/kanban/${path}`, {
    method,
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

test("POST tasks/<id>/decompose fans a triage task out into children and answers what it did", async () => {
  const created = await api("POST", "tasks", { title: "Ship the parser", body: "parse and document", triage: true });
  assert.is(created.status, 201, JSON.stringify(created.body));
  const id = created.body.task.id;
  h.decomposerReplies.push(
    JSON.stringify({
      fanout: true,
      rationale: "two parts",
      tasks: [
        { title: "Write the parser", body: "in src/", assignee: "writer", parents: [] },
        { title: "Document the parser", body: "in README", assignee: null, parents: [0] },
      ],
    }),
  );
  const r = await api("POST", `tasks/${id}/decompose`);
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal({ ok: r.body.ok, task_id: r.body.task_id, fanout: r.body.fanout, reason: r.body.reason }, { ok: true, task_id: id, fanout: true, reason: null });
  assert.is(r.body.child_ids.length, 2);
  const [a, b] = r.body.child_ids as string[];
  const first = (await api("GET", `tasks/${a}`)).body.task;
  const second = (await api("GET", `tasks/${b}`)).body.task;
  assert.equal([first.title, first.assignee], ["Write the parser", "writer"]);
  assert.equal(second.parents, [a]);
  // Without the token: 401 and nothing is decomposed; an unknown task: 404.
  assert.is((await api("POST", `tasks/${id}/decompose`, undefined, "")).status, 401);
  assert.is((await api("POST", "tasks/t_nosuch/decompose")).status, 404);
});

test("POST tasks/<id>/decompose with output the board cannot use leaves the task in triage with the reason", async () => {
  const { id } = (await api("POST", "tasks", { title: "vague", triage: true })).body.task;
  h.decomposerReplies.push("I would rather not answer in JSON.");
  const r = await api("POST", `tasks/${id}/decompose`);
  assert.is(r.status, 200);
  assert.is(r.body.ok, false);
  assert.ok(typeof r.body.reason === "string" && r.body.reason.length > 0, JSON.stringify(r.body));
  assert.is((await api("GET", `tasks/${id}`)).body.task.status, "triage");
});

test("POST profiles/<name>/describe-auto writes the model's description; a user-written one is kept unless overwrite", async () => {
  h.chatReplies.push({ text: '"Writes prose and release notes."\n' });
  const r = await api("POST", "profiles/writer/describe-auto");
  assert.is(r.status, 200, JSON.stringify(r.body));
  assert.equal([r.body.profile.description, r.body.profile.description_auto], ["Writes prose and release notes.", true]);
  const ask = h.fake.requests.at(-1)!.body;
  assert.match(ask.messages[0].content, /one-line descriptions of AI agent profiles/);
  assert.match(ask.messages[1].content, /Profile name: writer/);
  const listed = (await api("GET", "profiles")).body.profiles.find((p: any) => p.name === "writer");
  assert.equal([listed.description, listed.description_auto], ["Writes prose and release notes.", true]);

  assert.is((await api("PATCH", "profiles/writer", { description: "Mine." })).status, 200);
  const calls = h.fake.requests.length;
  const kept = await api("POST", "profiles/writer/describe-auto");
  assert.is(kept.body.profile?.description ?? null, "Mine.", JSON.stringify(kept.body));
  h.chatReplies.push({ text: "Drafts long-form text." });
  const over = await api("POST", "profiles/writer/describe-auto", { overwrite: true });
  assert.is(over.status, 200, JSON.stringify(over.body));
  assert.equal([over.body.profile.description, over.body.profile.description_auto], ["Drafts long-form text.", true]);
  assert.ok(h.fake.requests.length > calls);
  assert.ok((await api("POST", "profiles/ghost/describe-auto")).status >= 400);
});

test.run();
