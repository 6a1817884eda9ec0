import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { lstat, readlink, realpath } from "node:fs/promises";
import { homedir } from "node:os";
import { basename, dirname, join, relative, resolve } from "node:path";
import { AgentError } from "../../shared/errors.js";
import { profilePaths } from "../../shared/paths.js";
import type {
  ApprovalAsk,
  ApprovalChoice,
  ApprovalDecision,
  ElicitationAction,
  PendingApproval,
  PendingElicitation,
  RememberedApproval,
} from "../../shared/protocol/approvals.js";
import { checkElicitationAnswer, elicitationFields } from "../../shared/elicitation.js";
import type { AgentConfig } from "../../shared/config/defaults.js";
import { DocStore } from "../store/doc-store.js";
import type { ApprovalsApi, AskContext, ElicitationRequest } from "./api.js";
import { type ApprovalMode, classify, configuredPatterns, AGENT_STATE_NAMES, type DangerousPattern, grantKey, isAgentState, isInside } from "./classify.js";

export type { AskContext } from "./api.js";

interface Waiting {
  approval: PendingApproval;
  profile: string;
  key: string;
  ctx: AskContext;
  /** Set when an answer is taken (before its grant is written). */
  answered?: boolean;
  settle(decision: ApprovalDecision): void;
}

type ElicitAnswer = { action: ElicitationAction; content?: Record<string, string | number | boolean | string[]> };

interface WaitingElicitation {
  elicitation: PendingElicitation;
  settle(answer: ElicitAnswer, by: "user" | "timeout" | "interrupt" | "rule", message: string): void;
}

/** How often a waiting question checks that someone who can answer is still attached. */
const UNATTENDED_CHECK_MS = 250;

type RememberedDoc = { approvals: Record<string, RememberedApproval> };

export interface ApprovalServiceDeps {
  home: string;
  /** The profile's effective config (the home's for `default`). */
  configFor(profile: string): Promise<{ current(): AgentConfig }>;
  log?: { info(msg: string): void; warn(msg: string): void };
}

/**
 * The one place that decides whether a risky tool call runs (docs/approvals.md). Every runtime
 * asks through `decide` (the daemon's turns directly, kanban workers through
 * `approvals.request`); every front end answers through `answer`. Grants "for this session" live
 * in memory (a restart asks again); "always" grants are per profile, in the profile's
 * `approvals.json` written through the daemon's doc store.
 */
export class ApprovalService implements ApprovalsApi {
  readonly #waiting = new Map<string, Waiting>();
  readonly #sessionGrants = new Map<string, Set<string>>();
  readonly #yolo = new Set<string>();
  readonly #docs = new Map<string, Promise<DocStore<RememberedDoc>>>();
  readonly #elicitations = new Map<string, WaitingElicitation>();

  constructor(private readonly deps: ApprovalServiceDeps) {}

  async decide(ask: ApprovalAsk, ctx: AskContext): Promise<ApprovalDecision> {
    const config = (await this.deps.configFor(ctx.profile)).current().approvals;
    const mode: ApprovalMode = ctx.yolo || this.#yolo.has(ctx.sessionId) ? "off" : config.mode;
    const roots = await workspaceRoots(ctx.workspace);
    const agentHome = await realpath(this.deps.home).catch(() => this.deps.home);
    const realPath = ask.kind === "file_write" && ask.details.path ? await realTarget(ask.details.path) : undefined;
    const mcpApprove = ask.kind === "mcp_tool" && ask.details.server ? this.#mcpSetting(await this.deps.configFor(ctx.profile), ask.details.server) : undefined;
    const extraPatterns = [...homePatterns(this.deps.home, agentHome), ...configuredPatterns(config.dangerous_patterns)];
    const verdict = classify({
      ask,
      mode,
      roots,
      realPath,
      extraPatterns,
      mcpApprove,
      agentState: realPath !== undefined && isAgentState(realPath, agentHome),
    });
    if (!verdict.ask) return { allowed: true, by: "rule", choice: null, message: "allowed" };
    const key = grantKey(ask, realPath);
    if (this.#sessionGrants.get(ctx.sessionId)?.has(key)) return { allowed: true, by: "remembered", choice: "session", message: "allowed for this session" };
    if ((await this.#doc(ctx.profile)).data.approvals[key]) return { allowed: true, by: "remembered", choice: "always", message: "allowed (remembered)" };
    if (ctx.signal?.aborted) throw abortError(ctx.signal);
    const unattended = (note: string): ApprovalDecision =>
      config.non_interactive === "allow"
        ? { allowed: true, by: "rule", choice: null, message: "allowed (approvals.non_interactive: allow)" }
        : {
            allowed: false,
            by: "rule",
            choice: null,
            message: `denied: ${verdict.danger} needs approval (${verdict.why}); ${note}, so it is denied (approvals.non_interactive: deny). It was not run.`,
          };
    if (!ctx.interactive()) {
      // The log names the session and why, never the command or path (they may hold secrets).
      this.deps.log?.info(`approval for session ${ctx.sessionId} (${verdict.why.split(":")[0]}): nobody can answer; ${config.non_interactive}`);
      const d = unattended("no one can answer in a non-interactive session");
      // Said to whoever follows the session (a piped `chat -q` prints it on stderr), so a denial is never silent.
      if (!d.allowed) {
        const what = ask.summary.length > 200 ? `${ask.summary.slice(0, 200)}…` : ask.summary;
        ctx.emit?.({
          type: "approval_resolved",
          sessionId: ctx.sessionId,
          turnId: ctx.turnId ?? "",
          id: "",
          allowed: false,
          choice: null,
          by: "rule",
          message: `not run: ${what}: ${d.message}`,
        });
      }
      return d;
    }
    return this.#askPerson(ask, ctx, {
      why: verdict.why,
      key,
      timeoutS: config.timeout,
      // The last person who could answer left (closed the chat): the non-interactive rule applies.
      unattended: () => unattended("everyone who could answer left the session"),
    });
  }

  #mcpSetting(config: { current(): AgentConfig }, server: string): "ask" | "off" | undefined {
    return config.current().mcp_servers?.[server]?.approve;
  }

  #askPerson(
    ask: ApprovalAsk,
    ctx: AskContext,
    o: { why: string; key: string; timeoutS: number; unattended: () => ApprovalDecision },
  ): Promise<ApprovalDecision> {
    const now = Date.now();
    const approval: PendingApproval = {
      ...ask,
      id: `ap_${now.toString(36)}${randomBytes(4).toString("hex")}`,
      sessionId: ctx.sessionId,
      turnId: ctx.turnId,
      why: o.why,
      createdAt: now,
      expiresAt: now + o.timeoutS * 1000,
    };
    return new Promise<ApprovalDecision>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      let watch: NodeJS.Timeout | undefined;
      const finish = () => {
        clearTimeout(timer);
        clearInterval(watch);
        ctx.signal?.removeEventListener("abort", onAbort);
        this.#waiting.delete(approval.id);
      };
      const resolved = (d: ApprovalDecision) =>
        ctx.emit?.({
          type: "approval_resolved",
          sessionId: ctx.sessionId,
          turnId: ctx.turnId ?? "",
          id: approval.id,
          allowed: d.allowed,
          choice: d.choice,
          by: d.by === "timeout" || d.by === "interrupt" || d.by === "rule" ? d.by : "user",
          message: d.message,
        });
      const onAbort = () => {
        finish();
        resolved({ allowed: false, by: "interrupt", choice: null, message: "the question was dropped: the turn was interrupted" });
        reject(abortError(ctx.signal!));
      };
      timer = setTimeout(() => {
        finish();
        const d: ApprovalDecision = {
          allowed: false,
          by: "timeout",
          choice: null,
          message: `denied: nobody answered the approval question within ${o.timeoutS} s (approvals.timeout), so it was not run`,
        };
        this.deps.log?.info(`approval ${approval.id} of session ${ctx.sessionId} timed out: denied`);
        resolved(d);
        resolve(d);
      }, o.timeoutS * 1000);
      watch = setInterval(() => {
        if (ctx.interactive()) return;
        finish();
        const d = o.unattended();
        resolved(d);
        resolve(d);
      }, UNATTENDED_CHECK_MS);
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(approval.id, {
        approval,
        profile: ctx.profile,
        key: o.key,
        ctx,
        settle: (d) => {
          finish();
          resolved(d);
          resolve(d);
        },
      });
      ctx.emit?.({ type: "approval_request", sessionId: ctx.sessionId, turnId: ctx.turnId ?? "", approval });
    });
  }

  /** A person's answer. Session and always grants are remembered before the call runs. */
  async answer(id: string, choice: ApprovalChoice, reason?: string): Promise<{ allowed: boolean }> {
    const w = this.#waiting.get(id);
    if (!w || w.answered)
      throw new AgentError("approvals.not_found", `no approval question ${JSON.stringify(id)} is waiting (it was answered, timed out or its turn ended)`);
    // Claimed before any await: a second answer arriving while an "always" is being written is refused, not applied too.
    w.answered = true;
    const why = reason?.trim();
    this.deps.log?.info(`approval ${id} of session ${w.approval.sessionId} answered: ${choice}`);
    if (choice === "deny") {
      w.settle({
        allowed: false,
        by: "user",
        choice,
        ...(why ? { reason: why } : {}),
        message: why ? `denied by the user, who said: ${why}` : "denied by the user (no reason given); it was not run",
      });
      return { allowed: false };
    }
    if (choice === "session") {
      const grants = this.#sessionGrants.get(w.approval.sessionId) ?? new Set<string>();
      grants.add(w.key);
      this.#sessionGrants.set(w.approval.sessionId, grants);
    } else if (choice === "always") {
      const doc = await this.#doc(w.profile);
      const kind = w.approval.kind;
      await doc.update((d) => {
        d.approvals[w.key] = { key: w.key, kind, value: w.key.slice(w.key.indexOf(":") + 1), createdAt: Date.now() };
      });
    }
    // The write above may have taken a while: the question may have ended meanwhile.
    if (!this.#waiting.has(id)) return { allowed: false };
    w.settle({ allowed: true, by: "user", choice, message: `allowed (${choice})` });
    return { allowed: true };
  }

  pending(sessionId?: string): PendingApproval[] {
    return [...this.#waiting.values()].map((w) => w.approval).filter((a) => !sessionId || a.sessionId === sessionId);
  }

  setYolo(sessionId: string, on: boolean): void {
    if (on) this.#yolo.add(sessionId);
    else this.#yolo.delete(sessionId);
  }

  /** A deleted session's grants go with it. */
  forgetSession(sessionId: string): void {
    this.#yolo.delete(sessionId);
    this.#sessionGrants.delete(sessionId);
  }

  async remembered(profile: string): Promise<RememberedApproval[]> {
    return Object.values((await this.#doc(profile)).data.approvals).sort((a, b) => a.createdAt - b.createdAt);
  }

  async revoke(profile: string, which: { key?: string; all?: boolean }): Promise<string[]> {
    const doc = await this.#doc(profile);
    const keys = which.all ? Object.keys(doc.data.approvals) : [which.key!];
    if (!which.all && !doc.data.approvals[which.key!])
      throw new AgentError(
        "approvals.not_found",
        `profile ${profile} has no remembered approval ${JSON.stringify(which.key)} (agent approvals list shows them)`,
      );
    if (!keys.length) return [];
    await doc.update((d) => {
      for (const k of keys) delete d.approvals[k];
    });
    return keys;
  }

  #doc(profile: string): Promise<DocStore<RememberedDoc>> {
    let doc = this.#docs.get(profile);
    if (!doc) {
      doc = DocStore.open<RememberedDoc>({
        file: join(profilePaths(this.deps.home, profile).dir, "approvals.json"),
        kind: "approvals",
        version: 1,
        initial: () => ({ approvals: {} }),
        rollBack: true,
      });
      doc.catch(() => this.#docs.delete(profile));
      this.#docs.set(profile, doc);
    }
    return doc;
  }

  async elicit(request: ElicitationRequest, ctx: AskContext): Promise<ElicitAnswer> {
    const config = (await this.deps.configFor(ctx.profile)).current().approvals;
    const server = request.server;
    const said = (action: ElicitationAction, by: "user" | "timeout" | "interrupt" | "rule", message: string) =>
      ctx.emit?.({ type: "elicitation_resolved", sessionId: ctx.sessionId, turnId: ctx.turnId ?? "", id: "", action, by, message });
    let fieldsOk = true;
    try {
      elicitationFields(request.schema);
    } catch (error) {
      fieldsOk = false;
      this.deps.log?.warn(`mcp server ${server}: an elicitation with a form we cannot show (${(error as Error).message}): declined`);
    }
    if (!fieldsOk || !ctx.interactive()) {
      if (fieldsOk) this.deps.log?.info(`elicitation from mcp server ${server} in session ${ctx.sessionId}: nobody can answer; declined`);
      const why = fieldsOk ? "nobody can answer in a non-interactive session" : "its form has a field that cannot be asked";
      said("decline", "rule", `MCP server ${server} asked for input; declined: ${why}`);
      return { action: "decline" };
    }
    if (ctx.signal?.aborted) return { action: "cancel" };
    const now = Date.now();
    const elicitation: PendingElicitation = {
      id: `el_${now.toString(36)}${randomBytes(4).toString("hex")}`,
      sessionId: ctx.sessionId,
      turnId: ctx.turnId,
      server,
      message: request.message,
      schema: (request.schema ?? {}) as Record<string, unknown>,
      createdAt: now,
      expiresAt: now + config.timeout * 1000,
    };
    return new Promise<ElicitAnswer>((resolve) => {
      const emitResolved = (action: ElicitationAction, by: "user" | "timeout" | "interrupt" | "rule", message: string) =>
        ctx.emit?.({ type: "elicitation_resolved", sessionId: ctx.sessionId, turnId: ctx.turnId ?? "", id: elicitation.id, action, by, message });
      const settle = (answer: ElicitAnswer, by: "user" | "timeout" | "interrupt" | "rule", message: string) => {
        clearTimeout(timer);
        clearInterval(watch);
        ctx.signal?.removeEventListener("abort", onAbort);
        this.#elicitations.delete(elicitation.id);
        emitResolved(answer.action, by, message);
        resolve(answer);
      };
      const onAbort = () => settle({ action: "cancel" }, "interrupt", "the question was dropped: the tool call ended");
      const timer = setTimeout(() => {
        this.deps.log?.info(`elicitation ${elicitation.id} of session ${ctx.sessionId} timed out: declined`);
        settle({ action: "decline" }, "timeout", `declined: nobody answered within ${config.timeout} s (approvals.timeout)`);
      }, config.timeout * 1000);
      const watch = setInterval(() => {
        if (!ctx.interactive()) settle({ action: "decline" }, "rule", "declined: everyone who could answer left the session");
      }, UNATTENDED_CHECK_MS);
      ctx.signal?.addEventListener("abort", onAbort, { once: true });
      this.#elicitations.set(elicitation.id, { elicitation, settle });
      ctx.emit?.({ type: "elicitation_request", sessionId: ctx.sessionId, turnId: ctx.turnId ?? "", elicitation });
    });
  }

  /** A person's answer to an elicitation; accepted content must fit the form (else nothing changes and it stays open). */
  answerElicitation(id: string, action: ElicitationAction, content?: Record<string, unknown>): void {
    const w = this.#elicitations.get(id);
    if (!w)
      throw new AgentError(
        "approvals.elicitation_not_found",
        `no elicitation ${JSON.stringify(id)} is waiting (it was answered, timed out or its tool call ended)`,
      );
    if (action !== "accept") {
      if (content !== undefined) throw new AgentError("approvals.elicitation_invalid", `content goes only with accept, not ${action}`);
      this.deps.log?.info(`elicitation ${id} of session ${w.elicitation.sessionId} answered: ${action}`);
      w.settle({ action }, "user", action === "decline" ? "declined by the user" : "cancelled by the user");
      return;
    }
    const given = content ?? {};
    const problem = checkElicitationAnswer(w.elicitation.schema, given);
    if (problem) throw new AgentError("approvals.elicitation_invalid", `the answer does not fit the form of MCP server ${w.elicitation.server}: ${problem}`);
    // The log names the session and the action, never the values (they may be secrets).
    this.deps.log?.info(`elicitation ${id} of session ${w.elicitation.sessionId} answered: accept`);
    w.settle({ action: "accept", content: given as ElicitAnswer["content"] }, "user", "answered by the user");
  }

  pendingElicitations(sessionId?: string): PendingElicitation[] {
    return [...this.#elicitations.values()].map((w) => w.elicitation).filter((e) => !sessionId || e.sessionId === sessionId);
  }

  /**
   * The daemon stops: a waiting question is left alone. Its turn's signal aborts when the actors
   * stop, which drops it without a decision, so the resumed turn asks again (never granted).
   */
  stop(): void {}
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  return reason instanceof Error ? reason : new AgentError("chat.interrupted", "the turn was interrupted");
}

/**
 * The workspace and the root of the git worktree holding it, resolved through symlinks. `/`, the
 * user's home and their ancestors are never a workspace (a chat started in `/` or `~`, or a
 * dotfiles repository in `~`, would make every write "inside"): there, every write is asked.
 */
async function workspaceRoots(workspace: string): Promise<string[]> {
  const real = await realpath(workspace).catch(() => workspace);
  const found = [real];
  for (let dir = real; ; dir = dirname(dir)) {
    if (existsSync(join(dir, ".git"))) {
      if (dir !== real) found.push(dir);
      break;
    }
    if (dirname(dir) === dir) break;
  }
  const homes = await Promise.all([homedir(), process.env.HOME].filter((h): h is string => !!h).map((h) => realpath(h).catch(() => h)));
  return found.filter((root) => dirname(root) !== root && !homes.some((home) => isInside(home, root)));
}

/** Commands that name the agent's home or its state in it (config, approvals, actors…): smart mode asks. Other files in the home, and a kanban task's workspace, are not. */
function homePatterns(...homes: string[]): DangerousPattern[] {
  const names = new Set(homes);
  for (const h of homes) {
    const home = homedir();
    if (isInside(h, home) && h !== home) names.add(`~/${relative(home, h)}`);
  }
  const literal = [...names].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const alternatives = [...literal, String.raw`\$\{?AGENT_HOME\}?`].join("|");
  const end = String.raw`(?=[\s;&|)'"\x60]|$)`;
  const state = [...AGENT_STATE_NAMES].map((n) => n.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|");
  // The home itself, or one of its state entries (not a kanban task's workspace, unless `..` leads out of it).
  const after = String.raw`(?:/?${end}|/(?:${state})(?=[/\s;&|)'"\x60]|$)(?!/kanban/workspaces/[^/\s.][^/\s]*(?![^\s;&|]*/\.\.)))`;
  return [{ description: "touches the agent's own state (config, approvals, actors, skills)", pattern: new RegExp(`(?:${alternatives})${after}`, "m") }];
}

/**
 * A write target through every symlink on its way, as the write would follow them: the deepest
 * existing ancestor's real path, and a dangling link (one whose target does not exist yet, which
 * `writeFile` would create) followed to where it points. A link inside the workspace that points
 * out of it is outside.
 */
async function realTarget(path: string, hops = 0): Promise<string> {
  const real = await realpath(path).catch(() => null);
  if (real !== null) return real;
  const link = await lstat(path).catch(() => null);
  if (link?.isSymbolicLink() && hops < 40) {
    const to = await readlink(path).catch(() => null);
    if (to !== null) return realTarget(resolve(dirname(path), to), hops + 1);
  }
  if (dirname(path) === path) return path;
  return join(await realTarget(dirname(path), hops), basename(path));
}
