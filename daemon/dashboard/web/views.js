// Profiles, sessions, cron, actors and logs.
import { html } from "./html.js";
import { useCallback, useEffect, useRef, useState } from "preact/hooks";
import { events, get, kanban, rpc, send, when } from "./api.js";
import { useLive } from "./board.js";

export function Profiles({ profiles, reload }) {
  // Read when the view opens; the app re-reads on each `profiles.changed` (main.js).
  useEffect(() => {
    reload();
  }, []);
  return html`
    <section aria-labelledby="profiles-h">
      <h2 id="profiles-h">Profiles</h2>
      <ul class="list cards">
        ${profiles.map((p) => html`<${ProfileRow} key=${p.name} profile=${p} reload=${reload} />`)}
      </ul>
    </section>
  `;
}

function ProfileRow({ profile, reload }) {
  const [text, setText] = useState(profile.description ?? "");
  const [status, setStatus] = useState("");
  useEffect(() => setText(profile.description ?? ""), [profile.description]);
  const run = async (fn, done) => {
    setStatus("…");
    try {
      await fn();
      setStatus(done);
      reload();
    } catch (e) {
      setStatus(e.message);
    }
  };
  const id = `desc-${profile.name}`;
  return html`
    <li class="profile">
      <h3>${profile.name} ${profile.description_auto ? html`<span class="tag">auto</span>` : null}</h3>
      <label for=${id}>Description</label>
      <textarea id=${id} rows="2" value=${text} onInput=${(e) => setText(e.target.value)}></textarea>
      <div class="actions">
        <button onClick=${() => run(() => send("PATCH", kanban(`profiles/${encodeURIComponent(profile.name)}`), { description: text }), "Saved.")} disabled=${!text.trim()}>
          Save description
        </button>
        <button onClick=${() => run(() => send("POST", kanban(`profiles/${encodeURIComponent(profile.name)}/describe-auto`), { overwrite: true }), "Described.")}>
          Describe automatically
        </button>
        <span role="status">${status}</span>
      </div>
    </li>
  `;
}

export function Sessions() {
  const [query, setQuery] = useState("");
  const [results, setResults] = useState(null);
  const [recent, setRecent] = useState([]);
  const [open, setOpen] = useState(null);
  const [error, setError] = useState(null);
  const loadRecent = useCallback(
    () =>
      rpc("sessions.list", { limit: 50 }).then(
        (r) => setRecent(r.sessions ?? []),
        (e) => setError(e.message),
      ),
    [],
  );
  // A session created, deleted or updated (sessions.changed), and a turn running in one (its chat topic).
  useLive(loadRecent, ["topic"], (e) => e.topic === "sessions.changed" || e.topic.startsWith("chat.session."));
  const search = async (e) => {
    e.preventDefault();
    if (!query.trim()) return setResults(null);
    try {
      setResults((await rpc("sessions.search", { query })).results);
      setError(null);
    } catch (err) {
      setError(err.message);
    }
  };
  return html`
    <section aria-labelledby="sessions-h" class="split">
      <div>
        <h2 id="sessions-h">Sessions</h2>
        <form role="search" onSubmit=${search} class="inline">
          <label>Search transcripts <input type="search" value=${query} onInput=${(e) => setQuery(e.target.value)} /></label>
          <button type="submit">Search</button>
        </form>
        ${error ? html`<p role="alert" class="error">${error}</p>` : null}
        ${
          results
            ? html`<h3>${results.length} result${results.length === 1 ? "" : "s"}</h3>
              <ul class="list" data-testid="search-results">
                ${results.map(
                  (r) => html`<li>
                    <button class="link" onClick=${() => setOpen(r.session_id)}>${r.title || r.session_id}</button>
                    <span class="muted"> ${r.profile} · ${when(r.updated_at)}</span>
                    <p class="snippet">${r.snippet}</p>
                  </li>`,
                )}
              </ul>`
            : html`<h3>Recent</h3>
              <ul class="list">
                ${recent.map(
                  (s) => html`<li>
                    <button class="link" onClick=${() => setOpen(s.id)}>${s.title || s.id}</button>
                    <span class="muted"> ${s.profile} · ${s.messageCount} messages · ${when(s.updatedAt)}${s.active ? " · running" : ""}</span>
                  </li>`,
                )}
              </ul>`
        }
      </div>
      ${open ? html`<${Transcript} id=${open} />` : null}
    </section>
  `;
}

function textOf(content) {
  if (content == null) return "";
  if (typeof content === "string") return content;
  return content.map((p) => (typeof p.text === "string" ? p.text : `[${p.type}]`)).join("\n");
}

function Transcript({ id }) {
  const [data, setData] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(() => rpc("sessions.show", { sessionId: id }).then(setData, (e) => setError(e.message)), [id]);
  useLive(load, ["topic"], (e) => e.topic.includes(id));
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!data) return html`<p aria-busy="true">Loading…</p>`;
  return html`
    <article class="transcript" aria-label=${`Transcript of ${data.session.title || id}`} data-testid="transcript">
      <h3>${data.session.title || id}</h3>
      ${data.messages
        .filter((m) => m.role !== "system")
        .map((m) =>
          m.role === "tool"
            ? html`<details class="tool"><summary>tool result ${m.name ?? ""}</summary><pre>${textOf(m.content)}</pre></details>`
            : html`<div class=${`msg ${m.role}`}>
                <span class="role">${m.role}</span>
                ${textOf(m.content) ? html`<p>${textOf(m.content)}</p>` : null}
                ${(m.tool_calls ?? []).map(
                  (c) => html`<details class="tool"><summary>tool call ${c.function.name}</summary><pre>${c.function.arguments}</pre></details>`,
                )}
              </div>`,
        )}
    </article>
  `;
}

export function Cron() {
  const [data, setData] = useState(null);
  const [runs, setRuns] = useState(null);
  const [openJob, setOpenJob] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(() => {
    const jobs = rpc("cron.list").then(setData, (e) => setError(e.message));
    // The open job's runs too; a job removed elsewhere closes them.
    if (openJob)
      rpc("cron.logs", { id: openJob, limit: 20 }).then(setRuns, () => {
        setRuns(null);
        setOpenJob(null);
      });
    return jobs;
  }, [openJob]);
  // Cron broadcasts each change to a table (cron.changed): a job added, edited, paused, resumed or removed, a run started or finished.
  useLive(load, ["topic"], (e) => e.topic === "cron.changed");
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!data) return html`<p aria-busy="true">Loading…</p>`;
  return html`
    <section aria-labelledby="cron-h">
      <h2 id="cron-h">Cron <span class="muted">${data.timezone}</span></h2>
      ${data.jobs.length === 0 ? html`<p>No jobs. Add one with <code>agent cron add</code>.</p>` : null}
      <div class="table-wrap">
        <table>
          <thead>
            <tr><th scope="col">Job</th><th scope="col">Schedule</th><th scope="col">Next fire</th><th scope="col">Last run</th><th scope="col">Runs</th></tr>
          </thead>
          <tbody>
            ${data.jobs.map(
              (j) => html`<tr>
                <th scope="row"><button class="link" onClick=${() => setOpenJob(j.id)}>${j.name}</button> <span class="muted">${j.id}</span></th>
                <td>${j.schedule}${j.enabled ? "" : " (paused)"}</td>
                <td>${when(j.nextRunAt)}</td>
                <td>${when(j.lastRunAt)} ${j.lastStatus ?? ""}</td>
                <td>${j.runs ?? 0}</td>
              </tr>`,
            )}
          </tbody>
        </table>
      </div>
      ${
        runs
          ? html`<h3>Runs of ${runs.job.name}</h3>
            <ul class="list">
              ${runs.runs.map((r) => html`<li>${when(r.startedAt)} · ${r.status}${r.error ? ` — ${r.error}` : ""}</li>`)}
            </ul>`
          : null
      }
    </section>
  `;
}

const INSPECTOR_VIEWS = ["state", "connections", "queue", "traces", "workflow-history"];

export function Actors() {
  const [data, setData] = useState(null);
  const [open, setOpen] = useState(null);
  const [error, setError] = useState(null);
  const load = useCallback(() => rpc("actors.list", {}).then(setData, (e) => setError(e.message)), []);
  useLive(load, ["topic"], (e) => e.topic.startsWith("actor"));
  if (error) return html`<p role="alert" class="error">${error}</p>`;
  if (!data) return html`<p aria-busy="true">Loading…</p>`;
  return html`
    <section aria-labelledby="actors-h" class="split">
      <div>
        <h2 id="actors-h">Actors</h2>
        <ul class="list">
          ${data.actors.map(
            (a) => html`<li>
              <button class="link" onClick=${() => setOpen(a.actorId ?? a.actor_id ?? a.id)}>${a.name}</button>
              <span class="muted"> ${JSON.stringify(a.key ?? "")} · ${a.actorId ?? a.actor_id ?? a.id}</span>
            </li>`,
          )}
        </ul>
      </div>
      ${open ? html`<${Inspector} id=${open} />` : null}
    </section>
  `;
}

function Inspector({ id }) {
  const [view, setView] = useState("state");
  const [value, setValue] = useState(null);
  useEffect(() => {
    setValue(null);
    get(`/gateway/${encodeURIComponent(id)}/inspector/${view}`).then(setValue, (e) => setValue({ error: e.message }));
  }, [id, view]);
  return html`
    <article class="inspector" aria-label=${`Inspector of ${id}`}>
      <div role="tablist" aria-label="Inspector views">
        ${INSPECTOR_VIEWS.map((v) => html`<button role="tab" aria-selected=${v === view} onClick=${() => setView(v)}>${v}</button>`)}
      </div>
      <pre role="tabpanel">${value ? JSON.stringify(value, null, 2) : "Loading…"}</pre>
    </article>
  `;
}

const LEVELS = ["debug", "info", "warn", "error"];
/** Lines kept on the page: the oldest go first, so memory stays flat however long it follows. */
const MAX_LINES = 1000;

export function Logs() {
  const [components, setComponents] = useState([]);
  const [component, setComponent] = useState("daemon");
  const [level, setLevel] = useState("info");
  const [lines, setLines] = useState([]);
  const [follow, setFollow] = useState(true);
  const box = useRef(null);
  const load = useCallback(
    () =>
      get(`/api/logs?component=${encodeURIComponent(component)}&lines=200`).then((r) => {
        setComponents(r.components);
        setLines(r.records.map((record) => ({ component, record })));
      }),
    [component],
  );
  useEffect(() => {
    load();
    const s = events();
    const offs = [
      s.on("log", (e) => {
        if (!e.record || e.component !== component) return;
        setLines((prev) => {
          const next = prev.length >= MAX_LINES ? prev.slice(prev.length - MAX_LINES + 1) : prev.slice();
          next.push(e);
          return next;
        });
      }),
      s.on("resync", () => load()),
    ];
    return () => {
      for (const off of offs) off();
    };
  }, [component]);
  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);
  const min = LEVELS.indexOf(level);
  const shown = lines.filter((l) => LEVELS.indexOf(String(l.record.level ?? "info")) >= min);
  return html`
    <section aria-labelledby="logs-h">
      <div class="toolbar">
        <h2 id="logs-h">Logs</h2>
        <label
          >Component
          <select value=${component} onChange=${(e) => setComponent(e.target.value)}>
            ${(components.includes(component) ? components : [component, ...components]).map((c) => html`<option value=${c}>${c}</option>`)}
          </select>
        </label>
        <label
          >Level
          <select value=${level} onChange=${(e) => setLevel(e.target.value)}>
            ${LEVELS.map((l) => html`<option value=${l}>${l} and above</option>`)}
          </select>
        </label>
        <label><input type="checkbox" checked=${follow} onChange=${(e) => setFollow(e.target.checked)} /> Follow</label>
      </div>
      <div class="logbox" ref=${box} tabindex="0" role="log" aria-label=${`${component} log`} data-testid="logbox">
        ${shown.map(
          ({ record: r }) => html`<div class=${`line ${r.level ?? ""}`}>
            <span class="muted">${String(r.ts ?? "")
              .replace("T", " ")
              .replace(/Z$/, "")}</span> <span class="lvl">${r.level ?? ""}</span> ${r.msg ?? ""}${" "}<span
              class="muted"
              >${fields(r)}</span
            >
          </div>`,
        )}
      </div>
    </section>
  `;
}

function fields(r) {
  const { ts, level, component, msg, ...rest } = r;
  const s = Object.entries(rest)
    .map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`)
    .join(" ");
  return s.length > 400 ? `${s.slice(0, 400)}…` : s;
}
