import { z } from "zod";
import { rpc } from "./define.js";

/**
 * The approvals group (docs/approvals.md): the one service in the daemon that decides whether a
 * risky tool call runs. A question is delivered to the session's clients as an
 * `approval_request` chat event and answered with `approvals.answer`.
 */

/** What is asked about. The coder runtime and MCP call the same service with their own kinds. */
export type ApprovalKind = "command" | "file_write" | "mcp_tool" | "desktop";

/** The answers. The coder runtime maps them: once → accept, session/always → acceptForSession, deny → decline. */
export type ApprovalChoice = "once" | "session" | "always" | "deny";
export const APPROVAL_CHOICES = ["once", "session", "always", "deny"] as const;

export interface ApprovalDetails {
  /** `command`: the shell line and where it runs. */
  command?: string;
  cwd?: string;
  /** `file_write`: the target and a diff of the change (possibly cut). */
  path?: string;
  diff?: string;
  /** `mcp_tool`: the server, the tool and its arguments. */
  server?: string;
  tool?: string;
  args?: unknown;
  /** `desktop`: a computer_use action, on which display, and whether it is the daemon's private one. */
  desktop?: { display: string; private: boolean; action: string };
}

/** What a runtime asks: generic, so MCP tools and the coder runtime use the same shape. */
export interface ApprovalAsk {
  kind: ApprovalKind;
  /** The tool asking (terminal, write_file, patch, an MCP tool …). */
  tool: string;
  /** One line for a prompt or a status bar. */
  summary: string;
  details: ApprovalDetails;
}

/** A question waiting for an answer. */
export interface PendingApproval extends ApprovalAsk {
  id: string;
  sessionId: string;
  turnId: string | null;
  /** Why it is asked (the dangerous pattern matched, "outside the workspace", "approvals.mode is ask"). */
  why: string;
  createdAt: number;
  /** Epoch ms when it is denied unanswered (approvals.timeout). */
  expiresAt: number;
}

export interface ApprovalDecision {
  allowed: boolean;
  /** How it was decided: a person's choice, a grant remembered earlier, a rule. */
  by: "user" | "remembered" | "rule" | "timeout" | "interrupt";
  choice: ApprovalChoice | null;
  /** The reason a person gave with a denial. */
  reason?: string;
  /** What the model reads when it is denied. */
  message: string;
}

export interface RememberedApproval {
  /** `command:<command>`, `path:<absolute path>`, `mcp:<server>/<tool>`. */
  key: string;
  kind: ApprovalKind;
  value: string;
  createdAt: number;
}

/** An MCP server's elicitation (`elicitation/create`) waiting for a person's answer (docs/mcp.md). */
export interface PendingElicitation {
  id: string;
  sessionId: string;
  turnId: string | null;
  /** The server asking, and the tool call during which it asks. */
  server: string;
  message: string;
  /** The requested flat object schema (shared/elicitation.ts reads it). */
  schema: Record<string, unknown>;
  createdAt: number;
  /** Epoch ms when it is declined unanswered (approvals.timeout). */
  expiresAt: number;
}

export type ElicitationAction = "accept" | "decline" | "cancel";

const id = z.string().min(1).max(100);
const sessionId = z.string().min(1).max(128);

const askSchema = z
  .object({
    kind: z.enum(["command", "file_write", "mcp_tool", "desktop"]),
    tool: z.string().min(1).max(200),
    summary: z.string().max(10_000),
    details: z
      .object({
        command: z.string().max(100_000).optional(),
        cwd: z.string().max(4096).optional(),
        path: z.string().max(4096).optional(),
        diff: z.string().max(200_000).optional(),
        server: z.string().max(200).optional(),
        tool: z.string().max(200).optional(),
        args: z.unknown().optional(),
        desktop: z
          .object({ display: z.string().max(200), private: z.boolean(), action: z.string().max(100) })
          .strict()
          .optional(),
      })
      .strict(),
  })
  .strict();

export const approvalsMethods = {
  /** Answer a waiting question; `reason` goes back to the model with a denial. */
  "approvals.answer": rpc<{ ok: true; id: string; allowed: boolean }>()(() =>
    z.object({ id, choice: z.enum(APPROVAL_CHOICES), reason: z.string().max(2000).optional() }).strict(),
  ),
  /** The questions waiting now (one session's when given). */
  "approvals.pending": rpc<{ approvals: PendingApproval[] }>()(() => z.object({ sessionId: sessionId.optional() }).strict()),
  /**
   * Decide a tool call of a turn that runs outside the daemon (a kanban worker): the same rules,
   * as the connection's profile, with nobody to ask (non-interactive).
   */
  "approvals.request": rpc<ApprovalDecision>()(() => askSchema.extend({ sessionId, workspace: z.string().min(1).max(4096) }).strict()),
  /** The connection's profile's remembered ("always") approvals. */
  "approvals.list": rpc<{ profile: string; approvals: RememberedApproval[] }>()(() => z.object({}).strict()),
  /** Forget remembered approvals of the connection's profile: one key, or all. */
  "approvals.revoke": rpc<{ profile: string; removed: string[] }>()(() =>
    z
      .object({ key: z.string().min(1).max(100_000).optional(), all: z.boolean().optional() })
      .strict()
      .refine((p) => (p.key !== undefined) !== (p.all === true), { message: "give either key or all: true" }),
  ),
  /** `/yolo`: turn approvals off (or back on) for one session. */
  "approvals.yolo": rpc<{ ok: true; sessionId: string; yolo: boolean }>()(() => z.object({ sessionId, on: z.boolean() }).strict()),
  // MCP elicitation (docs/mcp.md): a server's question asked of the session's person.
  /** Answer a waiting elicitation: accept with the form's values (checked against its schema), decline, or cancel. */
  "approvals.elicitation.answer": rpc<{ ok: true; id: string; action: ElicitationAction }>()(() =>
    z
      .object({
        id,
        action: z.enum(["accept", "decline", "cancel"]),
        content: z
          .record(z.string().max(200), z.union([z.string().max(100_000), z.number(), z.boolean(), z.array(z.string().max(10_000)).max(1000)]))
          .optional(),
      })
      .strict(),
  ),
  /** The elicitations waiting now (one session's when given). */
  "approvals.elicitation.pending": rpc<{ elicitations: PendingElicitation[] }>()(() => z.object({ sessionId: sessionId.optional() }).strict()),
};
