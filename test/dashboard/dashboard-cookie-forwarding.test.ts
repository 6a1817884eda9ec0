// A signed-in browser's session cookie never reaches an actor's own code: a request forwarded
// to an actor's onRequest keeps the browser's other cookies and loses the dashboard's.
import { test } from "uvu";
import * as assert from "uvu/assert";
import { runCli } from "../helpers/cli.js";
import { putActor, startDaemon, type TestDaemon } from "../gateway/daemon.js";

const ACTORS = `
export const counter = { state: { n: 0 }, actions: { get: (c) => c.state.n } };
export const echo = {
  state: {},
  actions: {},
  onRequest: async (c, request) =>
    new Response(JSON.stringify({ cookie: request.headers.get("cookie") }), { headers: { "content-type": "application/json" } }),
};
`;

let d: TestDaemon;
test.before(async () => {
  d = await startDaemon({ actors: ACTORS });
});
test.after(async () => {
  await d?.dispose();
});

test("the dashboard's cookie is taken out of a request forwarded to an actor", async () => {
  const r = await runCli(["dashboard", "--no-open", "--json"], { home: d.home, env: d.env });
  assert.is(r.code, 0, r.stderr);
  const res = await fetch(JSON.parse(r.stdout).sign_in_url, { redirect: "manual" });
  const session = (res.headers.get("set-cookie") ?? "").split(";")[0]!;
  assert.match(session, /^agent_dashboard_\d+=/);
  const created = await putActor(d.url, { name: "echo", key: "k" });
  assert.is(created.status, 200, JSON.stringify(created.json));
  const id = created.json.actor.actor_id;
  const forwarded = await fetch(`${d.url}/gateway/${id}/request/x`, { headers: { cookie: `theme=dark; ${session}` } });
  assert.is(forwarded.status, 200);
  assert.equal(await forwarded.json(), { cookie: "theme=dark" });
  // Header routing (x-rivet-target: actor) reaches the same onRequest: the same rule.
  const routed = await fetch(`${d.url}/request/x`, { headers: { cookie: `${session}; theme=dark`, "x-rivet-target": "actor", "x-rivet-actor": id } });
  assert.is(routed.status, 200);
  assert.equal(await routed.json(), { cookie: "theme=dark" });
});

test.run();
