// The kanban board: columns by status, drag to move (the board decides; a refusal snaps the
// card back and shows the board's reason), the task detail and the orchestration settings.
import { html } from "./html.js";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { events, get, kanban, rpc, send, when } from "./api.js";

const COLUMNS = ["triage", "todo", "scheduled", "ready", "running", "blocked", "review", "done"];

/** Re-read when fn's data may have changed: on each matching event (coalesced to one read per 50 ms) and after a reconnect. */
export function useLive(load, types, match = () => true) {
  useEffect(() => {
    load();
    const s = events();
    let timer = null;
    const again = (data) => {
      if (!match(data)) return;
      if (timer) return;
      timer = setTimeout(() => {
        timer = null;
        load();
      }, 50);
    };
    const offs = [...types.map((t) => s.on(t, again)), s.on("resync", () => load())];
    return () => {
      for (const off of offs) off();
      clearTimeout(timer);
    };
  }, [load]);
}

export function Board({ profiles }) {
  const [board, setBoard] = useState(null);
  const [error, setError] = useState(null);
  const [notice, setNotice] = useState(null);
  const [openId, setOpenId] = useState(null);
  const dragging = useRef(null);
  const load = useCallback(() => get(kanban("board")).then(setBoard, setError), []);
  useLive(load, ["kanban"]);

  const move = async (id, status) => {
    const task = board?.tasks.find((t) => t.id === id);
    if (!task || task.status === status) return;
    // Shown at once where it was dropped; put back if the board refuses.
    setBoard({ ...board, tasks: board.tasks.map((t) => (t.id === id ? { ...t, status } : t)) });
    try {
      await send("PATCH", kanban(`tasks/${encodeURIComponent(id)}`), {
        status,
        reason: status === "blocked" || status === "scheduled" ? "moved on the dashboard" : undefined,
      });
      setNotice({ kind: "ok", text: `${id} moved to ${status}` });
    } catch (e) {
      setNotice({ kind: "refused", text: `${task.title}: not moved to ${status}: ${e.message}` });
    }
    load();
  };

  if (error && !board) return html`<p role="alert">${error.message}</p>`;
  if (!board) return html`<p aria-busy="true">Loading the board…</p>`;
  const byStatus = Object.fromEntries(COLUMNS.map((c) => [c, []]));
  for (const t of board.tasks) byStatus[t.status]?.push(t);
  return html`
    <section aria-labelledby="board-h">
      <div class="toolbar">
        <h2 id="board-h">Board <span class="muted">${board.board ?? ""}</span></h2>
        <${CreateTask} profiles=${profiles} onCreated=${load} />
      </div>
      <div role="status" aria-live="polite" class=${`notice-line ${notice?.kind ?? ""}`} data-testid="board-notice">${notice?.text ?? ""}</div>
      <div class="columns">
        ${COLUMNS.map(
          (status) => html`
            <section
              class="column"
              aria-label=${`${status}: ${byStatus[status].length} tasks`}
              data-status=${status}
              onDragOver=${(e) => e.preventDefault()}
              onDrop=${(e) => {
                e.preventDefault();
                const id = e.dataTransfer.getData("text/plain") || dragging.current;
                if (id) move(id, status);
              }}
            >
              <h3>${status} <span class="count">${byStatus[status].length}</span></h3>
              <ul>
                ${byStatus[status].map(
                  (t) => html`
                    <li key=${t.id}>
                      <div
                        class="card"
                        draggable="true"
                        role="button"
                        tabindex="0"
                        data-task=${t.id}
                        aria-label=${`Open ${t.title} (${t.id}, ${status})`}
                        onClick=${() => setOpenId(t.id)}
                        onKeyDown=${(e) => {
                          if (e.key === "Enter" || e.key === " ") {
                            e.preventDefault();
                            setOpenId(t.id);
                          }
                        }}
                        onDragStart=${(e) => {
                          dragging.current = t.id;
                          e.dataTransfer.effectAllowed = "move";
                          e.dataTransfer.setData("text/plain", t.id);
                        }}
                      >
                        <span class="card-title">${t.title}</span>
                        <span class="card-meta">${t.id} · ${t.assignee ?? "unassigned"}${t.priority ? ` · p${t.priority}` : ""}</span>
                        ${t.reason ? html`<span class="card-reason">${t.reason}</span>` : null}
                      </div>
                    </li>
                  `,
                )}
              </ul>
            </section>
          `,
        )}
      </div>
      <${Orchestration} profiles=${profiles} />
      ${openId ? html`<${TaskDetail} id=${openId} profiles=${profiles} onClose=${() => setOpenId(null)} onMove=${move} />` : null}
    </section>
  `;
}

function CreateTask({ profiles, onCreated }) {
  const [title, setTitle] = useState("");
  const [assignee, setAssignee] = useState("");
  const [error, setError] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    try {
      await send("POST", kanban("tasks"), { title, ...(assignee ? { assignee } : {}) });
      setTitle("");
      setError(null);
      onCreated();
    } catch (err) {
      setError(err.message);
    }
  };
  return html`
    <form class="inline" onSubmit=${submit} aria-label="Create a task">
      <label>New task <input value=${title} onInput=${(e) => setTitle(e.target.value)} required maxlength="500" /></label>
      <label
        >Assignee
        <select value=${assignee} onChange=${(e) => setAssignee(e.target.value)}>
          <option value="">(default)</option>
          ${profiles.map((p) => html`<option value=${p.name}>${p.name}</option>`)}
        </select>
      </label>
      <button type="submit">Create</button>
      ${error ? html`<span role="alert" class="error">${error}</span>` : null}
    </form>
  `;
}

function Orchestration({ profiles }) {
  const [value, setValue] = useState(null);
  const [draft, setDraft] = useState(null);
  const [status, setStatus] = useState("");
  useEffect(() => {
    get(kanban("orchestration")).then(
      (v) => {
        setValue(v);
        setDraft({ orchestrator_profile: v.orchestrator_profile ?? "", default_assignee: v.default_assignee ?? "", auto_decompose: v.auto_decompose });
      },
      (e) => setStatus(e.message),
    );
  }, []);
  if (!draft) return null;
  const save = async (e) => {
    e.preventDefault();
    try {
      const v = await send("PUT", kanban("orchestration"), draft);
      setValue(v);
      setStatus("Saved.");
    } catch (err) {
      setStatus(`Not saved: ${err.message}`);
    }
  };
  const pick = (key, label) => html`
    <label
      >${label}
      <select name=${key} value=${draft[key]} onChange=${(e) => setDraft({ ...draft, [key]: e.target.value })}>
        <option value="">(unset: the default profile)</option>
        ${profiles.map((p) => html`<option value=${p.name}>${p.name}</option>`)}
      </select>
      <span class="muted" data-testid=${`resolved-${key}`}>resolves to ${value.resolved[key]}</span>
    </label>
  `;
  return html`
    <details class="panel">
      <summary>Orchestration settings</summary>
      <form onSubmit=${save} aria-label="Orchestration settings">
        ${pick("orchestrator_profile", "Orchestrator profile")} ${pick("default_assignee", "Default assignee")}
        <label
          ><input type="checkbox" name="auto_decompose" checked=${draft.auto_decompose} onChange=${(e) => setDraft({ ...draft, auto_decompose: e.target.checked })} />
          Decompose triage tasks automatically</label
        >
        <button type="submit">Save settings</button>
        <span role="status" data-testid="orchestration-status">${status}</span>
      </form>
    </details>
  `;
}

function TaskDetail({ id, profiles, onClose, onMove }) {
  const [task, setTask] = useState(null);
  const [log, setLog] = useState("");
  const [error, setError] = useState(null);
  const [text, setText] = useState("");
  const dialog = useRef(null);
  const load = useCallback(() => {
    get(kanban(`tasks/${encodeURIComponent(id)}`)).then(
      (r) => setTask(r.task),
      (e) => setError(e.message),
    );
    rpc("kanban.log", { taskId: id, lines: 40 }).then(
      (r) => setLog(r.text ?? ""),
      () => setLog(""),
    );
  }, [id]);
  useLive(load, ["kanban"], (e) => e?.task_id === id);
  useEffect(() => {
    // The focus moves into the detail, and back to where it was (the card) when it closes.
    const before = document.activeElement;
    dialog.current?.focus();
    const esc = (e) => e.key === "Escape" && onClose();
    window.addEventListener("keydown", esc);
    return () => {
      window.removeEventListener("keydown", esc);
      if (before instanceof HTMLElement && before.isConnected) before.focus();
    };
  }, []);
  const act = async (fn) => {
    try {
      await fn();
      setError(null);
      setText("");
      load();
    } catch (e) {
      setError(e.message);
    }
  };
  const ids = [id];
  return html`
    <aside class="detail" role="dialog" aria-modal="false" aria-labelledby="detail-h" tabindex="-1" ref=${dialog} data-testid="task-detail">
      <header>
        <h2 id="detail-h">${task ? task.title : id}</h2>
        <button onClick=${onClose} aria-label="Close the task detail">×</button>
      </header>
      ${error ? html`<p role="alert" class="error">${error}</p>` : null}
      ${
        task
          ? html`
            <dl class="facts">
              <dt>Id</dt><dd>${task.id}</dd>
              <dt>Status</dt><dd data-testid="detail-status">${task.status}${task.reason ? ` — ${task.reason}` : ""}</dd>
              <dt>Assignee</dt><dd>${task.assignee ?? "unassigned"}</dd>
              <dt>Priority</dt><dd>${task.priority}</dd>
            </dl>
            <h3>Body</h3>
            <pre class="body" data-testid="detail-body">${task.body || "(no body)"}</pre>
            <div class="actions">
              <label
                >Move to
                <select onChange=${(e) => e.target.value && onMove(id, e.target.value).then(load)} value="">
                  <option value="">…</option>
                  ${COLUMNS.filter((c) => c !== task.status && c !== "running").map((c) => html`<option value=${c}>${c}</option>`)}
                </select>
              </label>
              <label
                >Assign
                <select onChange=${(e) => e.target.value && act(() => rpc("kanban.assign", { ids, assignee: e.target.value }))} value="">
                  <option value="">…</option>
                  ${profiles.map((p) => html`<option value=${p.name}>${p.name}</option>`)}
                </select>
              </label>
              <label class="wide">Comment or reason <textarea value=${text} onInput=${(e) => setText(e.target.value)} rows="2"></textarea></label>
              <button onClick=${() => act(() => rpc("kanban.comment", { id, body: text, author: "dashboard" }))} disabled=${!text.trim()}>Comment</button>
              <button onClick=${() => act(() => rpc("kanban.block", { ids, reason: text || "blocked on the dashboard" }))}>Block</button>
              <button onClick=${() => act(() => rpc("kanban.unblock", { ids }))}>Unblock</button>
              <button onClick=${() => act(() => rpc("kanban.schedule", { ids, reason: text || undefined }))}>Schedule</button>
              <button onClick=${() => act(() => send("POST", kanban(`tasks/${encodeURIComponent(id)}/decompose`)))}>Decompose</button>
              <button onClick=${() => act(() => rpc("kanban.archive", { ids }))}>Archive</button>
            </div>
            <h3>Comments (${task.comments.length})</h3>
            <ul class="list" data-testid="detail-comments">
              ${task.comments.map((c) => html`<li><strong>${c.author}</strong> <span class="muted">${when(c.at)}</span><p>${c.body}</p></li>`)}
            </ul>
            <h3>Runs (${task.runs.length})</h3>
            <ul class="list">
              ${task.runs.map((r) => html`<li>${r.run_id} · ${r.profile} · ${r.outcome} · ${when(r.started_at)}${r.detail ? ` — ${r.detail}` : ""}</li>`)}
            </ul>
            <h3>Events</h3>
            <ol class="list events" data-testid="detail-events">
              ${task.events.slice(-50).map((e) => html`<li><span class="muted">${when(e.at)}</span> ${e.type} <span class="muted">by ${e.by}</span></li>`)}
            </ol>
            <h3>Log tail</h3>
            <pre class="log">${log || "(no log)"}</pre>
          `
          : html`<p aria-busy="true">Loading…</p>`
      }
    </aside>
  `;
}
