/**
 * Teams through a real daemon: the Graph notification listener on its own port, a transcript
 * notification → the transcript fetched from the fake Graph → a turn with the fake model → the
 * summary posted to Teams, in both delivery modes; another resource → a turn whose answer is
 * posted; `agent cron` with `--deliver teams`; and a missing variable named in `channels status`.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";
import { type FakeGraphApi, startFakeGraphApi, teamsVtt, transcriptNotification } from "../fixtures/fake-graph-api.js";
import { launchDaemon, runCli } from "../helpers/cli.js";
import { chatHome, waitFor } from "../agent/helpers.js";

const STATE = "daemon-test-client-state-1234";
const CHANNEL = "19:general@thread.tacv2";

interface ChannelRow {
  platform: string;
  state: string;
  detail: string | null;
  last_error: string | null;
}

const lastUserText = (r: RecordedRequest) => {
  const msgs = (r.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  const last = [...msgs].reverse().find((m) => m.role === "user");
  return typeof last?.content === "string" ? last.content : JSON.stringify(last?.content);
};

function respond(r: RecordedRequest) {
  const text = lastUserText(r);
  if (text.includes("<transcript>")) return { text: "## Decisions\n- Alice ships the release on Friday\n- Bob writes the notes" };
  if (text.includes("change notification")) return { text: "Noted the new chat message." };
  return { text: `digest: ${text.slice(0, 40)}` };
}

function teamsEnv(api: FakeGraphApi, extra: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return {
    AGENT_GATEWAY_PORT: "0",
    TEAMS_GRAPH_ACCESS_TOKEN: "daemon-test-graph-token",
    TEAMS_GRAPH_BASE_URL: api.url,
    MSGRAPH_WEBHOOK_ENABLED: "true",
    MSGRAPH_WEBHOOK_PORT: "0",
    MSGRAPH_WEBHOOK_CLIENT_STATE: STATE,
    MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES: "communications/onlineMeetings*/transcripts*,chats/*/messages",
    MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS: "127.0.0.0/8,::1/128",
    ...extra,
  };
}

async function teamsRow(home: string, env: NodeJS.ProcessEnv, done: (row: ChannelRow) => boolean): Promise<ChannelRow> {
  return waitFor(
    "the teams channel in `channels status`",
    async () => {
      const r = await runCli(["channels", "status", "--json"], { home, env });
      const row = (JSON.parse(r.stdout || "{}").channels as ChannelRow[] | undefined)?.find((c) => c.platform === "teams");
      return row && done(row) ? row : null;
    },
    30_000,
  );
}

function listenerUrl(row: ChannelRow): string {
  const m = /listener (http:\/\/[^\s;]+)/.exec(row.detail ?? "");
  assert.ok(m, `a listener URL in ${row.detail}`);
  return m?.[1] as string;
}

const notify = (url: string, ...value: unknown[]) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ value }) }).then(async (r) => {
    await r.arrayBuffer();
    return r.status;
  });

test("graph mode: a transcript notification ends in a channel post; another resource → a turn; cron --deliver teams", async () => {
  const api = await startFakeGraphApi();
  api.transcripts.set(
    "t-1",
    teamsVtt([
      ["Alice", "We ship on Friday."],
      ["Bob", "I'll write the notes."],
    ]),
  );
  const h = await chatHome({ respond });
  const env = teamsEnv(api, { TEAMS_DELIVERY_MODE: "graph", TEAMS_TEAM_ID: "team-1", TEAMS_CHANNEL_ID: CHANNEL });
  try {
    await launchDaemon(h.home, env);
    const row = await teamsRow(h.home, env, (r) => r.state === "running");
    assert.match(row.detail ?? "", /delivery graph → channel 19:general@thread\.tacv2 of team team-1/);
    const url = listenerUrl(row);

    // The subscription's validation handshake.
    const v = await fetch(`${url}?validationToken=${encodeURIComponent("token 123")}`, { method: "POST" });
    assert.equal([v.status, v.headers.get("content-type"), await v.text()], [200, "text/plain; charset=utf-8", "token 123"]);

    // A transcript notification: 202 at once, then the fetch, the turn, the post.
    const n = transcriptNotification({ clientState: STATE, meetingId: "meeting-1", transcriptId: "t-1", organizerId: "organizer-1" });
    assert.is(await notify(url, n), 202);
    await waitFor("the summary in the channel", () => api.posts.length === 1, 30_000);
    const post = api.posts[0];
    assert.equal([post.kind, post.target, post.authorization], ["channel", `team-1/${CHANNEL}`, "Bearer daemon-test-graph-token"]);
    const content = (post.body.body as { content: string }).content;
    assert.match(content, /<b>Meeting summary<\/b>/);
    assert.match(content, /Alice ships the release on Friday/);
    const fetched = api.calls.find((c) => c.method === "GET");
    assert.equal(
      [fetched?.path, fetched?.authorization],
      ["/v1.0/users/organizer-1/onlineMeetings/meeting-1/transcripts/t-1/content?$format=text/vtt", "Bearer daemon-test-graph-token"],
    );
    const turn = h.fake.requests.find((r) => lastUserText(r).includes("<transcript>"));
    assert.match(lastUserText(turn as RecordedRequest), /Alice: We ship on Friday\.\nBob: I'll write the notes\./);

    // The same notification again (Graph's retry), and a bad client state: no new turn.
    assert.is(await notify(url, n), 202);
    assert.is(await notify(url, { ...n, clientState: "guess" }), 403);

    // Another accepted resource: a turn of the profile, its answer posted.
    const chatMsg = {
      subscriptionId: "sub-2",
      changeType: "created",
      clientState: STATE,
      resource: "chats('19:x@thread.v2')/messages('1700')",
      resourceData: { id: "1700" },
    };
    assert.is(await notify(url, chatMsg), 202);
    await waitFor("the notification turn's answer", () => api.posts.length === 2, 30_000);
    assert.match((api.posts[1].body.body as { content: string }).content, /Noted the new chat message\./);
    assert.is(h.fake.requests.filter((r) => lastUserText(r).includes("<transcript>")).length, 1, "the duplicate got no turn");

    // Cron: `--deliver teams` posts the run's output to the configured channel.
    const add = await runCli(["cron", "add", "every 1d", "write the weekly digest", "--deliver", "teams", "--json"], { home: h.home, env });
    assert.is(add.code, 0, add.stderr);
    const job = JSON.parse(add.stdout).job as { id: string; deliver: { kind: string; channel: string } };
    assert.equal(job.deliver, { kind: "channel", channel: "teams" });
    const run = await runCli(["cron", "run", job.id, "--json"], { home: h.home, env, timeoutMs: 60_000 });
    assert.is(run.code, 0, run.stderr);
    assert.equal(JSON.parse(run.stdout).run.delivery, { status: "delivered", detail: "teams:default" });
    await waitFor("the cron post", () => api.posts.length === 3, 30_000);
    assert.match((api.posts[2].body.body as { content: string }).content, /digest: write the weekly digest/);

    // A transcript Graph does not have: the failure is in `channels status`, nothing is posted.
    assert.is(await notify(url, transcriptNotification({ clientState: STATE, meetingId: "meeting-9", transcriptId: "t-missing" })), 202);
    const failed = await teamsRow(h.home, env, (r) => /transcript fetch failed \(HTTP 404/.test(r.last_error ?? ""));
    assert.not.match(failed.last_error ?? "", /daemon-test-graph-token/);
    assert.is(api.posts.length, 3);
  } finally {
    await h.dispose();
    await api.close();
  }
});

test("incoming_webhook mode: the missing URL is named at start; once set, a transcript notification ends in an Adaptive Card", async () => {
  const api = await startFakeGraphApi();
  api.transcripts.set("t-2", teamsVtt([["Carol", "Budget approved."]]));
  const h = await chatHome({ respond });
  const missing = teamsEnv(api, { TEAMS_DELIVERY_MODE: "incoming_webhook" });
  try {
    // A second profile that only inherits the environment starts no Teams of its own.
    const made = await runCli(["profile", "create", "work", "--no-alias"], { home: h.home, env: missing });
    assert.is(made.code, 0, made.stderr);
    await launchDaemon(h.home, missing);
    const refused = await teamsRow(h.home, missing, (r) => r.state === "error");
    assert.match(refused.last_error ?? "", /TEAMS_INCOMING_WEBHOOK_URL/);
    await runCli(["daemon", "stop"], { home: h.home, env: missing });

    const env = { ...missing, TEAMS_INCOMING_WEBHOOK_URL: api.webhookUrl };
    await launchDaemon(h.home, env);
    const row = await teamsRow(h.home, env, (r) => r.state === "running");
    assert.not.match(row.detail ?? "", /secret-part/, "the webhook URL is a secret");
    const all = JSON.parse((await runCli(["channels", "status", "--json"], { home: h.home, env })).stdout).channels as Array<{
      platform: string;
      profile: string;
    }>;
    assert.equal(
      all.filter((c) => c.platform === "teams").map((c) => c.profile),
      ["default"],
    );
    const url = listenerUrl(row);
    assert.is(await notify(url, transcriptNotification({ clientState: STATE, meetingId: "meeting-2", transcriptId: "t-2" })), 202);
    await waitFor("the card at the webhook", () => api.posts.length === 1, 30_000);
    const card = api.posts[0].body as { attachments: Array<{ contentType: string; content: { body: Array<{ text: string }> } }> };
    assert.is(card.attachments[0].contentType, "application/vnd.microsoft.card.adaptive");
    assert.equal(
      card.attachments[0].content.body.map((b) => b.text),
      ["Meeting summary", "## Decisions\n- Alice ships the release on Friday\n- Bob writes the notes"],
    );
    // `agent channels test teams default` posts through the same delivery.
    const probe = await runCli(["channels", "test", "teams", "default"], { home: h.home, env });
    assert.is(probe.code, 0, probe.stderr);
    await waitFor("the test card", () => api.posts.length === 2, 30_000);
    assert.match(JSON.stringify(api.posts[1].body), /this chat is reachable/);
    // Without an organizer the tenant-wide path is used.
    assert.ok(api.calls.some((c) => c.path.startsWith("/v1.0/communications/onlineMeetings/meeting-2/transcripts/t-2/content")));
    // The webhook URL, the client state and the Graph token never reach the log.
    const log = readFileSync(join(h.home, "logs", "daemon.log"), "utf8");
    assert.match(log, /teams adapter started/);
    for (const secret of ["webhookb2-secret-part", STATE, "daemon-test-graph-token"]) assert.not.ok(log.includes(secret), `${secret} in the log`);
  } finally {
    await h.dispose();
    await api.close();
  }
});

test.run();
