import type { WireMessage } from "../../models/openai-chat.js";
import { MAX_CHILDREN } from "./parse.js";

export interface RosterEntry {
  name: string;
  description: string | null;
}

/** The decomposer's instructions: the answer format parse.ts reads. */
const SYSTEM = [
  "You plan work on a kanban board worked by AI agent profiles. Given one task and the roster of profiles, decide whether it should be split.",
  `Split it (fan-out) only when it has parts that are clearly separate pieces of work (often for different profiles): then list 2 to ${MAX_CHILDREN} child tasks, each small enough for one agent in one session, each with a precise title and a body saying what done means.`,
  "A child's `parents` are the 0-based indices of sibling children it must wait for (their results are its input); children with no parents start at once, in parallel. Never make a cycle.",
  "The original task waits for all its children and is then judged by an orchestrator, so do not add a final 'check everything' child.",
  "Otherwise (no fan-out), tighten the task: a clear title and a body with the goal and what done means.",
  "Pick each assignee from the roster by its description; null when none fits.",
  "Answer with ONE JSON object and nothing else:",
  '  fan-out: {"fanout": true, "rationale": "<one sentence>", "tasks": [{"title": "...", "body": "...", "assignee": "<profile>"|null, "parents": [<indices>]}]}',
  '  single:  {"fanout": false, "rationale": "<one sentence>", "title": "...", "body": "...", "assignee": "<profile>"|null}',
].join("\n");

export function decomposerMessages(task: { id: string; title: string; body: string; assignee: string | null }, roster: RosterEntry[]): WireMessage[] {
  const profiles = roster.map((p) => `- ${p.name}: ${p.description?.trim() || "(no description)"}`).join("\n");
  const user = [
    `Task ${task.id}: ${task.title}`,
    task.body.trim() ? `\n${task.body.trim().slice(0, 20_000)}` : "\n(no body)",
    task.assignee ? `\nCurrently assigned to: ${task.assignee}` : "",
    `\nProfiles:\n${profiles || "- default: (no description)"}`,
  ].join("");
  return [
    { role: "system", content: SYSTEM },
    { role: "user", content: user },
  ];
}
