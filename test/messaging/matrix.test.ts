import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "uvu";
import * as assert from "uvu/assert";
import { chatHome, PNG_1X1, waitFor } from "../agent/helpers.js";
import { BOT, type FakeMatrix, type MatrixSent, startFakeMatrix } from "../fixtures/fake-matrix.js";
import type { RecordedRequest } from "../fixtures/fake-model-server.js";
import { killQuietly } from "../helpers/cli.js";

/**
 * The Matrix adapter through the real matrix-js-sdk against a fake homeserver on loopback
 * (versions, capabilities, filter, a long-polling sync, send, join), with a real daemon and the
 * fake model: what the rooms get is what the fake recorded.
 */
const OWNER = "@owner:fake.test";
const OTHER = "@other:fake.test";
const STRANGER = "@stranger:fake.test";
const DM = "!dm:fake.test";
const ROOM = "!room:fake.test";
const SECRET_ROOM = "!secret:fake.test";

const mx: FakeMatrix = await startFakeMatrix();
mx.addRoom(DM, [OWNER]);
mx.addRoom(ROOM, [OWNER, OTHER]);
mx.addRoom(SECRET_ROOM, [OWNER, OTHER], { encrypted: true });

const lastUser = (r: RecordedRequest): string => {
  const users = (r.body?.messages ?? []).filter((m: { role: string }) => m.role === "user");
  const c = users[users.length - 1]?.content;
  return typeof c === "string" ? c : JSON.stringify(c);
};
const CHART = join(mkdtempSync(join(tmpdir(), "mx-chart-")), "chart.png");
writeFileSync(CHART, PNG_1X1);
const h = await chatHome(
  { respond: (r) => ({ text: lastUser(r).includes("draw it") ? `Here:\n\n![chart](${CHART})` : `echo: ${lastUser(r)}` }) },
  ["matrix:", "  enabled: true", `  homeserver: ${mx.url}`, `  user_id: "${BOT}"`, `  allow_users: ["${OWNER}"]`, ""].join("\n"),
);
h.env.MATRIX_ACCESS_TOKEN = mx.token;
h.env.AGENT_DAEMON_START_TIMEOUT_MS = "60000";

test.after(async () => {
  await h.dispose();
  await mx.close();
});

const daemonLog = () => {
  try {
    return readFileSync(join(h.home, "logs", "daemon.log"), "utf8")
      .split("\n")
      .filter((l) => /matrix|"level":"error"/i.test(l))
      .slice(-10)
      .join("\n");
  } catch {
    return "";
  }
};
const sentTo = (room: string, re: RegExp) => mx.sent.filter((s) => s.room === room && re.test(String(s.content.body ?? "")));
const waitSent = (room: string, re: RegExp, timeoutMs = 20_000): Promise<MatrixSent> =>
  waitFor(
    () => `a message to ${room} matching ${re}; sent: ${JSON.stringify(mx.sent.map((s) => [s.room, s.content.body]))}\n${daemonLog()}`,
    () => sentTo(room, re)[0],
    timeoutMs,
  );
const status = async () => JSON.parse((await h.cli(["channels", "status", "--json"])).stdout) as { channels: Array<Record<string, any>> };
const running = () =>
  waitFor(
    () => `the matrix adapter running\n${daemonLog()}`,
    async () => (await status()).channels.find((c) => c.platform === "matrix" && c.state === "running"),
    30_000,
  );
/** Waits until the client has asked for a sync after `eventPos`-th event: the state up to it is saved. */
const syncedPast = (n: number) => waitFor("a sync past the event", () => mx.syncs.some((s) => s !== null && Number(s.slice(1)) >= n), 20_000);

test("a DM → a turn → the reply in the room; the encryption state is in the status", async () => {
  const s = await running();
  assert.match(s.detail, /encryption: unavailable/);
  mx.push(DM, OWNER, "hello matrix");
  const r = await waitSent(DM, /hello matrix/);
  assert.is(r.content.body, "echo: hello matrix");
  assert.is(r.content["m.relates_to"], undefined, "a DM is answered in the room itself");
  const list = JSON.parse((await h.cli(["sessions", "list", "--json", "--kind", "messaging"])).stdout);
  assert.ok(
    (list.sessions ?? list).some((x: { source?: string }) => x.source === "matrix"),
    JSON.stringify(list),
  );
});

test("in a room a mention is needed; the answer starts a thread, whose follow-ups need no mention and share its session", async () => {
  const before = h.fake.requests.length;
  mx.push(ROOM, OWNER, "nobody called me");
  const root = mx.push(ROOM, OWNER, "what is two plus two", { mention: true });
  const r = await waitSent(ROOM, /two plus two/);
  assert.is(r.content.body, "echo: what is two plus two", "the mention is taken out");
  assert.equal(r.content["m.relates_to"].rel_type, "m.thread");
  assert.is(r.content["m.relates_to"].event_id, root);
  mx.push(ROOM, OWNER, "and times three", { thread: root });
  const r2 = await waitSent(ROOM, /times three/);
  assert.is(r2.content["m.relates_to"].event_id, root);
  assert.is(h.fake.requests.length, before + 2, "the unmentioned room message got no turn");
  const req = h.fake.requests.find((x) => lastUser(x) === "and times three")!;
  assert.match(JSON.stringify(req.body.messages), /two plus two/, "the thread is one session");
  assert.is(sentTo(ROOM, /nobody called me/).length, 0);
});

test("an image the agent wrote as a Markdown image of a local file is uploaded and sent as m.image", async () => {
  mx.push(DM, OWNER, "draw it");
  const img = await waitFor("the image", () => mx.sent.find((s) => s.room === DM && s.content.msgtype === "m.image"));
  assert.is(img.content.body, "chart.png");
  assert.match(img.content.url, /^mxc:\/\/fake\.test\//);
  assert.equal(mx.uploads[0], { name: "chart.png", type: "image/png", bytes: mx.uploads[0]!.bytes });
});

test("no mention is needed in a DM thread", async () => {
  const root = mx.push(DM, OWNER, "start of a DM thread");
  await waitSent(DM, /start of a DM thread/);
  mx.push(DM, OWNER, "inside the DM thread", { thread: root });
  const r = await waitSent(DM, /inside the DM thread/);
  assert.is(r.content["m.relates_to"].event_id, root);
});

test("an invite from an allowed user is accepted; a stranger's is not", async () => {
  mx.invite("!strange:fake.test", STRANGER);
  mx.invite("!new:fake.test", OWNER);
  await waitFor(
    () => `the join; joined: ${mx.joined}\n${daemonLog()}`,
    () => mx.joined.includes("!new:fake.test"),
    20_000,
  );
  await waitFor("the stranger's invite refused", () => /refused a matrix invite.*stranger/.test(readFileSync(join(h.home, "logs", "daemon.log"), "utf8")));
  assert.not.ok(mx.joined.includes("!strange:fake.test"));
});

test("the command the log suggests for a refused invite quotes a sender id that a shell would run (a Matrix id may hold ; $ !)", async () => {
  const evil = "@eve;touch$HOME.pwned:fake.test";
  mx.invite("!evil:fake.test", evil);
  const line = await waitFor("the evil invite refused", () =>
    readFileSync(join(h.home, "logs", "daemon.log"), "utf8")
      .split("\n")
      .find((l) => l.includes("refused a matrix invite") && l.includes("eve;touch")),
  );
  const msg = JSON.parse(line).msg as string;
  assert.ok(msg.includes("`agent channels allow matrix '@eve;touch$HOME.pwned:fake.test'`"), msg);
  assert.not.ok(mx.joined.includes("!evil:fake.test"));
});

test("an encrypted room is refused with a clear message where crypto is unavailable; plain rooms still work", async () => {
  mx.push(SECRET_ROOM, OWNER, "", { encrypted: true });
  mx.push(SECRET_ROOM, OWNER, "", { encrypted: true });
  const n = await waitSent(SECRET_ROOM, /end-to-end encrypted/);
  assert.is(n.content.msgtype, "m.notice");
  assert.match(n.content.body, /cannot read the messages here/);
  mx.push(DM, OWNER, "still here?");
  await waitSent(DM, /still here\?/);
  assert.is(sentTo(SECRET_ROOM, /./).length, 1, "told once");
});

test("after a kill -9 sync resumes from the stored token: old messages are not answered again, new ones are", async () => {
  mx.push(DM, OWNER, "before the crash");
  await waitSent(DM, /before the crash/);
  const answered = mx.sent.length;
  // The sync after the answer's echo: the state through it has been saved.
  await syncedPast(Number(/\$ev(\d+)/.exec(mx.sent[answered - 1]!.eventId)![1]));
  const { pid } = JSON.parse((await h.cli(["daemon", "status", "--json"])).stdout) as { pid: number };
  killQuietly(pid);
  await waitFor("the daemon gone", () => {
    try {
      process.kill(pid, 0);
      return false;
    } catch {
      return true;
    }
  });
  const syncsBefore = mx.syncs.length;
  mx.push(DM, OWNER, "while it was down");
  const s = await running();
  assert.match(s.detail, /resumed from the stored token/);
  await waitSent(DM, /while it was down/, 30_000);
  const after = mx.syncs.slice(syncsBefore);
  assert.ok(after.length > 0 && after[0] !== null, `the first sync after the restart resumed from a token: ${JSON.stringify(after)}`);
  assert.is(sentTo(DM, /before the crash/).length, 1, "the old message was not answered again");
  assert.is(sentTo(DM, /hello matrix/).length, 1);
});

test("MATRIX_AUTO_THREAD=false answers in the room; MATRIX_DM_MENTION_THREADS=true threads a mentioned DM message", async () => {
  const stop = await h.cli(["daemon", "stop"]);
  assert.is(stop.code, 0, stop.stderr);
  Object.assign(h.env, { MATRIX_AUTO_THREAD: "false", MATRIX_DM_MENTION_THREADS: "true" });
  await running();
  mx.push(ROOM, OWNER, "no thread please", { mention: true });
  const r = await waitSent(ROOM, /no thread please/);
  assert.is(r.content["m.relates_to"], undefined);
  const id = mx.push(DM, OWNER, "thread this DM", { mention: true });
  const d = await waitSent(DM, /thread this DM/);
  assert.is(d.content["m.relates_to"]?.event_id, id);
  assert.is(d.content["m.relates_to"]?.rel_type, "m.thread");
});

test("with the token's device id the SDK's Rust crypto loads: encryption is on, and an encrypted room is no longer refused", async () => {
  const stop = await h.cli(["daemon", "stop"]);
  assert.is(stop.code, 0, stop.stderr);
  const { encodeRecoveryKey } = await import("matrix-js-sdk/lib/crypto-api/index.js");
  const recoveryKey = encodeRecoveryKey(new Uint8Array(32).fill(7))!;
  Object.assign(h.env, { MATRIX_DEVICE_ID: "AGENTDEVICE", MATRIX_RECOVERY_KEY: recoveryKey });
  const s = await running();
  assert.match(s.detail, /encryption: on/);
  // This homeserver keeps no secret storage or key backup: the restore is tried, fails, and says so; the key itself is never logged.
  const log = () => readFileSync(join(h.home, "logs", "daemon.log"), "utf8");
  await waitFor("the restore attempt logged", () => /restoring keys with MATRIX_RECOVERY_KEY failed/.test(log()), 20_000);
  assert.not.ok(log().includes(recoveryKey), "the recovery key is not in the log");
  await waitFor("the device keys uploaded", () => mx.cryptoCalls.includes("keys/upload"), 20_000);
  const told = sentTo(SECRET_ROOM, /./).length;
  mx.push(SECRET_ROOM, OWNER, "", { encrypted: true });
  // A message whose room key the bot never got cannot be decrypted: logged, not answered, no refusal.
  await waitFor("the decryption failure logged", () => /could not be decrypted/.test(readFileSync(join(h.home, "logs", "daemon.log"), "utf8")), 20_000);
  mx.push(DM, OWNER, "plain after crypto");
  await waitSent(DM, /plain after crypto/);
  assert.is(sentTo(SECRET_ROOM, /./).length, told);
});

test.run();
