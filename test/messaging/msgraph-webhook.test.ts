/**
 * The Graph change-notification listener on a real loopback socket: the validation handshake,
 * the client state, the source networks (ipaddr.js), the accepted resources, duplicates, the
 * 202 before the work, browsers refused, and the bind rule (access.ts).
 */
import { request } from "node:http";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { AgentError } from "../../shared/errors.js";
import { NotificationListenerAccess, SourceNetworks } from "../../daemon/http/access.js";
import { type AcceptedNotification, MsgraphWebhook, NOTIFICATIONS_PATH, RecentKeys } from "../../daemon/messaging/teams/msgraph-webhook.js";
import { resourceAccepted } from "../../daemon/messaging/teams/teams-settings.js";
import { transcriptNotification } from "../fixtures/fake-graph-api.js";

const STATE = "client-state-0123456789";

interface Harness {
  url: string;
  accepted: AcceptedNotification[];
  refused: string[];
  hook: MsgraphWebhook;
  /** While set, the work after the 202 waits for it. */
  gate: { release: () => void; promise: Promise<void> } | null;
}

async function listener(opts: { cidrs?: string[]; resources?: string[]; clientState?: string } = {}): Promise<Harness> {
  const access = await NotificationListenerAccess.create({ bindHost: "127.0.0.1", clientState: opts.clientState ?? STATE, cidrs: opts.cidrs ?? [] });
  const h: Harness = { url: "", accepted: [], refused: [], hook: null as unknown as MsgraphWebhook, gate: null };
  h.hook = new MsgraphWebhook({
    host: "127.0.0.1",
    port: 0,
    access,
    acceptedResources: opts.resources ?? [],
    onAccepted: async (list) => {
      await h.gate?.promise;
      h.accepted.push(...list);
    },
    onRefused: (reason) => h.refused.push(reason),
  });
  await h.hook.start();
  h.url = `${h.hook.url}${NOTIFICATIONS_PATH}`;
  return h;
}

const post = (url: string, value: unknown[], headers: Record<string, string> = {}) =>
  fetch(url, { method: "POST", headers: { "content-type": "application/json", ...headers }, body: JSON.stringify({ value }) });

test("the validation handshake: the token echoed as text/plain, 200, before anything else", async () => {
  const h = await listener();
  try {
    const token = "Validation: Token with spaces & symbols <x>";
    const res = await fetch(`${h.url}?validationToken=${encodeURIComponent(token)}`, { method: "POST", headers: { "content-type": "text/plain" }, body: "" });
    assert.is(res.status, 200);
    assert.match(res.headers.get("content-type") ?? "", /^text\/plain/);
    assert.is(await res.text(), token);
    assert.is(h.hook.counts.validations, 1);
    // Elsewhere: 404.
    assert.is((await fetch(`${h.hook.url}/other?validationToken=x`, { method: "POST" })).status, 404);
  } finally {
    await h.hook.stop();
  }
});

test("clientState: a wrong or missing one is refused (403 when the body has no good one); the good ones of a mixed body are kept", async () => {
  const h = await listener();
  try {
    const bad = transcriptNotification({ clientState: "wrong-state", meetingId: "m1", transcriptId: "t1" });
    const res = await post(h.url, [bad, { ...bad, clientState: undefined }]);
    assert.is(res.status, 403);
    assert.match(await res.text(), /msgraph_webhook\.bad_client_state/);
    const good = transcriptNotification({ clientState: STATE, meetingId: "m2", transcriptId: "t2" });
    const mixed = await post(h.url, [bad, good]);
    assert.is(mixed.status, 202);
    await h.hook.settled();
    assert.equal(
      h.accepted.map((a) => a.notification.resourceData?.id),
      ["t2"],
    );
    assert.is(h.hook.counts.badClientState, 3);
  } finally {
    await h.hook.stop();
  }
  // No client state configured (a loopback listener may start so): nothing is accepted, not even an empty state.
  const open = await listener({ clientState: "" });
  try {
    const res = await post(open.url, [transcriptNotification({ clientState: "", meetingId: "m", transcriptId: "t" })]);
    assert.is(res.status, 403);
  } finally {
    await open.hook.stop();
  }
});

test("a body of many notifications without the client state (anyone may send it) is one refusal for the log, not one per notification", async () => {
  const h = await listener();
  try {
    const res = await post(
      h.url,
      Array.from({ length: 5000 }, () => ({})),
    );
    assert.is(res.status, 403);
    assert.is(h.hook.counts.badClientState, 5000);
    assert.equal(h.refused, ["bad clientState"]);
  } finally {
    await h.hook.stop();
  }
});

test("a source outside MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS gets 403 (the handshake too); inside, it is served", async () => {
  // The request comes from 127.0.0.1; these networks exclude it.
  const h = await listener({ cidrs: ["10.0.0.0/8", "2603:1000::/25", "52.96.0.0/14"] });
  try {
    const res = await post(h.url, [transcriptNotification({ clientState: STATE, meetingId: "m", transcriptId: "t" })]);
    assert.is(res.status, 403);
    assert.match(await res.text(), /auth\.forbidden_source/);
    assert.is((await fetch(`${h.url}?validationToken=abc`, { method: "POST" })).status, 403);
    // X-Forwarded-For is not believed.
    const forged = await post(h.url, [transcriptNotification({ clientState: STATE, meetingId: "m", transcriptId: "t" })], { "x-forwarded-for": "10.1.2.3" });
    assert.is(forged.status, 403);
    assert.is(h.accepted.length, 0);
    assert.is(h.hook.counts.sourceRefused, 3);
  } finally {
    await h.hook.stop();
  }
  const inside = await listener({ cidrs: ["10.0.0.0/8", "127.0.0.0/8"] });
  try {
    const res = await fetch(`${inside.url}?validationToken=abc`, { method: "POST" });
    assert.is([res.status, await res.text()].join(" "), "200 abc");
  } finally {
    await inside.hook.stop();
  }
});

test("a resource outside the accepted list is dropped (202, not handed on); duplicates are dropped; the 202 comes before the work", async () => {
  const h = await listener({ resources: ["communications/onlineMeetings*/transcripts*", "chats/*/messages"] });
  let release = () => {};
  h.gate = { release: () => release(), promise: new Promise<void>((r) => (release = r)) };
  try {
    const outside = { ...transcriptNotification({ clientState: STATE, meetingId: "m", transcriptId: "t" }), resource: "users('u1')/messages('x')" };
    assert.is((await post(h.url, [outside])).status, 202);
    const n = transcriptNotification({ clientState: STATE, meetingId: "m9", transcriptId: "t9" });
    // Answered while the work is still held at the gate.
    const res = await post(h.url, [n, n]);
    assert.is(res.status, 202);
    assert.is(h.accepted.length, 0, "the work waits; the answer did not");
    // The same notification again (Graph's retry): dropped.
    assert.is((await post(h.url, [n])).status, 202);
    h.gate.release();
    await h.hook.settled();
    assert.equal(
      h.accepted.map((a) => a.notification.resource),
      [n.resource],
    );
    assert.equal([h.hook.counts.resourceRefused, h.hook.counts.duplicates, h.hook.counts.accepted], [1, 2, 1]);
    assert.ok(h.refused.includes("resource outside MSGRAPH_WEBHOOK_ACCEPTED_RESOURCES"));
  } finally {
    await h.hook.stop();
  }
});

test("browsers are refused (an Origin, or Sec-Fetch-Site of another site); any Host is served", async () => {
  const h = await listener();
  try {
    const n = [transcriptNotification({ clientState: STATE, meetingId: "m", transcriptId: "t" })];
    assert.is((await post(h.url, n, { origin: "https://evil.example" })).status, 403);
    assert.is((await post(h.url, n, { "sec-fetch-site": "cross-site" })).status, 403);
    // A reverse proxy's public name: served (the client state authenticates, not the name).
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = request(h.url, { method: "POST", headers: { host: "bot.example.com", "content-type": "application/json" } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      });
      req.on("error", reject);
      req.end(JSON.stringify({ value: [{ ...n[0], subscriptionId: "sub-host" }] }));
    });
    assert.is(status, 202);
  } finally {
    await h.hook.stop();
  }
});

test("bind rule: a non-loopback bind without a client state refuses to start; with one it may; CIDRs are parsed by ipaddr.js", async () => {
  try {
    await NotificationListenerAccess.create({ bindHost: "0.0.0.0", clientState: "", cidrs: [] });
    assert.unreachable("must refuse");
  } catch (error) {
    assert.instance(error, AgentError);
    assert.is((error as AgentError).code, "msgraph_webhook.token_required");
    assert.match((error as Error).message, /MSGRAPH_WEBHOOK_CLIENT_STATE/);
  }
  await NotificationListenerAccess.create({ bindHost: "0.0.0.0", clientState: STATE, cidrs: [] });
  try {
    await SourceNetworks.parse(["10.0.0.0/33"], "MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS");
    assert.unreachable("a bad CIDR");
  } catch (error) {
    assert.match((error as Error).message, /MSGRAPH_WEBHOOK_ALLOWED_SOURCE_CIDRS/);
  }
  const nets = await SourceNetworks.parse(["52.96.0.0/14", "2603:1000::/25", "20.20.32.10"], "x");
  assert.ok(nets.allows("52.97.1.2"));
  assert.ok(nets.allows("::ffff:52.97.1.2"), "an IPv4-mapped peer is matched as IPv4");
  assert.ok(nets.allows("2603:1000::1"));
  assert.ok(nets.allows("20.20.32.10"));
  assert.not.ok(nets.allows("52.100.0.1"));
  assert.not.ok(nets.allows("127.0.0.1"));
  assert.not.ok(nets.allows(undefined));
  assert.ok((await SourceNetworks.parse([], "x")).allows("203.0.113.9"), "no list: any source");
});

test("accepted-resource patterns and the bounded duplicate memory", () => {
  const list = ["communications/onlineMeetings", "chats/*/messages"];
  assert.ok(resourceAccepted("communications/onlineMeetings('m')/transcripts('t')", list));
  assert.ok(resourceAccepted("/chats/19:abc@thread.v2/messages/123", list));
  assert.ok(resourceAccepted("chats('19:abc@thread.v2')/messages('123')", list), "Graph's key form");
  assert.not.ok(resourceAccepted("communications/onlineMeetingsX", list));
  assert.not.ok(resourceAccepted("users/u/messages", list));
  assert.ok(resourceAccepted("anything", []));
  const keys = new RecentKeys(3);
  for (const k of ["a", "b", "c"]) assert.not.ok(keys.seen(k));
  assert.ok(keys.seen("a"));
  assert.not.ok(keys.seen("d"));
  assert.is(keys.size, 3);
  assert.not.ok(keys.seen("a"), "the oldest was forgotten");
});

test.run();
