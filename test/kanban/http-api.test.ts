// The dashboard plugin API (/api/plugins/kanban/) over real HTTP on the daemon's listener.
import { request as httpRequest } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { type KanbanHome, kanbanHome, TOKEN } from "./board-helpers.js";

let h: KanbanHome;
let base: string;

test.before(async () => {
  h = await kanbanHome();
  assert.is((await h.cli(["profile", "create", "writer", "--no-alias"])).code, 0);
  base = (await h.json(["daemon", "status"])).gateway_url;
});
test.after(async () => {
  await h.dispose();
});

async function api(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(`${base}/api/plugins/kanban/${path}`, {
    method,
    headers: { authorization: `Bearer ${TOKEN}`, ...(body !== undefined ? { "content-type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

test("without the gateway token every route is 401 and nothing runs", async () => {
  const before = (await api("GET", "board")).body.tasks.length;
  const r = await api("POST", "tasks", { title: "sneaky" }, { authorization: "" });
  assert.is(r.status, 401);
  assert.is(r.body.code, "unauthorized");
  assert.is((await api("GET", "board")).body.tasks.length, before);
});

test("a request from a foreign Origin is refused with 403", async () => {
  const r = await api("GET", "board", undefined, { origin: "https://evil.example" });
  assert.is(r.status, 403);
  assert.is(r.body.code, "forbidden_origin");
});

test("a non-loopback Host is refused with 403 (DNS rebinding)", async () => {
  const url = new URL(base);
  const status = await new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: url.hostname, port: url.port, path: "/api/plugins/kanban/board", headers: { host: "evil.example", authorization: `Bearer ${TOKEN}` } },
      (res) => {
        res.resume();
        resolve(res.statusCode!);
      },
    );
    req.on("error", reject);
    req.end();
  });
  assert.is(status, 403);
});

test("POST tasks creates a task (201) and GET tasks/<id> returns it", async () => {
  const r = await api("POST", "tasks", { title: "From the dashboard", assignee: "writer", priority: 2 });
  assert.is(r.status, 201);
  assert.equal([r.body.task.status, r.body.task.assignee, r.body.task.priority], ["ready", "writer", 2]);
  const got = await api("GET", `tasks/${r.body.task.id}`);
  assert.is(got.status, 200);
  assert.is(got.body.task.title, "From the dashboard");
});

test("POST tasks and PATCH with a mistyped assignee are refused (400, did you mean) and change nothing", async () => {
  const before = (await api("GET", "board")).body.tasks.length;
  const r = await api("POST", "tasks", { title: "Typo", assignee: "writre" });
  assert.is(r.status, 400);
  assert.is(r.body.code, "unknown_profile");
  assert.match(r.body.message, /did you mean "writer"\?/);
  assert.is((await api("GET", "board")).body.tasks.length, before);
  const id = (await api("POST", "tasks", { title: "Keep my assignee", assignee: "writer" })).body.task.id;
  const patch = await api("PATCH", `tasks/${id}`, { assignee: "writre" });
  assert.is(patch.status, 400);
  assert.match(patch.body.message, /did you mean "writer"\?/);
  assert.is((await api("GET", `tasks/${id}`)).body.task.assignee, "writer");
});

test("POST tasks with hold creates a held todo task; PATCH status ready does not get around the hold", async () => {
  const r = await api("POST", "tasks", { title: "Held from the dashboard", hold: true });
  assert.is(r.status, 201);
  assert.equal([r.body.task.status, r.body.task.held], ["todo", true]);
  const ready = await api("PATCH", `tasks/${r.body.task.id}`, { status: "ready" });
  assert.is(ready.status, 409);
  assert.match(ready.body.message, /held: agent kanban release/);
  assert.is((await api("GET", `tasks/${r.body.task.id}`)).body.task.status, "todo");
});

test("GET board lists the tasks with counts", async () => {
  const r = await api("GET", "board");
  assert.is(r.status, 200);
  assert.is(r.body.board, "default");
  assert.ok(Array.isArray(r.body.tasks));
  assert.is(r.body.stats.total, r.body.tasks.length);
});

test("PATCH status running is refused with 400 and changes nothing", async () => {
  const id = (await api("POST", "tasks", { title: "Not by hand" })).body.task.id;
  const r = await api("PATCH", `tasks/${id}`, { status: "running" });
  assert.is(r.status, 400);
  assert.is(r.body.code, "running_refused");
  assert.is((await api("GET", `tasks/${id}`)).body.task.status, "ready");
});

test("PATCH status ready with unfinished parents is 409 naming them", async () => {
  const parent = (await api("POST", "tasks", { title: "Parent" })).body.task.id;
  const child = (await api("POST", "tasks", { title: "Child", parents: [parent] })).body.task.id;
  await api("PATCH", `tasks/${child}`, { status: "blocked", reason: "wait" });
  const r = await api("PATCH", `tasks/${child}`, { status: "ready" });
  assert.is(r.status, 409);
  assert.is(r.body.code, "parents_unfinished");
  assert.equal(r.body.metadata.parents, [parent]);
  assert.match(r.body.message, new RegExp(parent));
  assert.is((await api("GET", `tasks/${child}`)).body.task.status, "blocked");
});

test("PATCH edits title, priority and status through the board's rules", async () => {
  const id = (await api("POST", "tasks", { title: "Edit me" })).body.task.id;
  const r = await api("PATCH", `tasks/${id}`, { title: "Edited", priority: 9, status: "done", summary: "finished" });
  assert.is(r.status, 200);
  assert.equal([r.body.task.title, r.body.task.priority, r.body.task.status, r.body.task.summary], ["Edited", 9, "done", "finished"]);
  const noSummary = await api("PATCH", `tasks/${(await api("POST", "tasks", { title: "x" })).body.task.id}`, { status: "done" });
  assert.is(noSummary.status, 400);
});

test("an unknown task is 404 and a bad body is 400", async () => {
  assert.is((await api("GET", "tasks/t_00000000")).status, 404);
  assert.is((await api("POST", "tasks", "{not json")).status, 400);
  assert.is((await api("POST", "tasks", { title: "" })).status, 400);
  assert.is((await api("PATCH", "tasks/t_00000000", { status: "sideways" })).status, 400);
  assert.is((await api("GET", "nowhere")).status, 404);
});

test("GET orchestration echoes the resolved fallbacks; PUT sets them and refuses unknown profiles", async () => {
  const first = await api("GET", "orchestration");
  assert.equal(first.body, {
    orchestrator_profile: null,
    default_assignee: null,
    auto_decompose: true,
    resolved: { orchestrator_profile: "default", default_assignee: "default" },
  });
  const bad = await api("PUT", "orchestration", { orchestrator_profile: "ghost" });
  assert.is(bad.status, 400);
  assert.is(bad.body.code, "unknown_profile");
  assert.equal((await api("GET", "orchestration")).body, first.body);
  const set = await api("PUT", "orchestration", { orchestrator_profile: "writer", auto_decompose: false });
  assert.is(set.status, 200);
  assert.equal(set.body.resolved.orchestrator_profile, "writer");
  assert.equal([set.body.orchestrator_profile, set.body.auto_decompose], ["writer", false]);
  const reset = await api("PUT", "orchestration", { orchestrator_profile: "", auto_decompose: true });
  assert.equal(reset.body.resolved.orchestrator_profile, "default");
});

test("GET profiles lists descriptions and PATCH sets a user-written one", async () => {
  const r = await api("PATCH", "profiles/writer", { description: "Writes prose and release notes." });
  assert.is(r.status, 200);
  assert.equal([r.body.profile.description, r.body.profile.description_auto], ["Writes prose and release notes.", false]);
  const list = await api("GET", "profiles");
  const writer = list.body.profiles.find((p: any) => p.name === "writer");
  assert.is(writer.description, "Writes prose and release notes.");
  assert.is((await api("PATCH", "profiles/ghost", { description: "x" })).status >= 400, true);
});

test.run();
