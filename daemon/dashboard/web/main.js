// The dashboard app: a header with the views, the live status, and the view chosen (kept in the
// URL's hash so a reload stays where it was).
import { render } from "preact";
import { useCallback, useEffect, useState } from "preact/hooks";
import { events, get, kanban, whenSignedOut } from "./api.js";
import { Board } from "./board.js";
import { html } from "./html.js";
import { Actors, Cron, Logs, Profiles, Sessions } from "./views.js";

const VIEWS = [
  ["board", "Board"],
  ["profiles", "Profiles"],
  ["sessions", "Sessions"],
  ["cron", "Cron"],
  ["actors", "Actors"],
  ["logs", "Logs"],
];

function currentView() {
  const v = location.hash.slice(1);
  return VIEWS.some(([id]) => id === v) ? v : "board";
}

function App() {
  const [view, setView] = useState(currentView());
  const [live, setLive] = useState("connecting");
  const [signedOut, setSignedOut] = useState(false);
  const [profiles, setProfiles] = useState([]);
  const loadProfiles = useCallback(
    () =>
      get(kanban("profiles")).then(
        (r) => setProfiles(r.profiles),
        () => undefined,
      ),
    [],
  );
  useEffect(() => {
    whenSignedOut(() => setSignedOut(true));
    const onHash = () => setView(currentView());
    window.addEventListener("hashchange", onHash);
    const s = events();
    // The profiles feature broadcasts each change (CLI, TUI, here): one re-read per 50 ms.
    let timer = null;
    const again = ({ topic }) => {
      if (topic !== "profiles.changed" || timer) return;
      timer = setTimeout(() => {
        timer = null;
        loadProfiles();
      }, 50);
    };
    const offs = [s.on("status", setLive), s.on("resync", loadProfiles), s.on("topic", again)];
    loadProfiles();
    return () => {
      window.removeEventListener("hashchange", onHash);
      for (const off of offs) off();
      clearTimeout(timer);
    };
  }, []);
  if (signedOut) {
    return html`<main class="notice">
      <h1>Not signed in</h1>
      <p>Run <code>agent dashboard</code> and open the link it prints. A link signs in once, within five minutes.</p>
    </main>`;
  }
  const View = { board: Board, profiles: Profiles, sessions: Sessions, cron: Cron, actors: Actors, logs: Logs }[view];
  return html`
    <a class="skip" href="#main">Skip to the view</a>
    <header class="top">
      <h1>agent</h1>
      <nav aria-label="Views">
        ${VIEWS.map(([id, label]) => html`<a href=${`#${id}`} aria-current=${id === view ? "page" : undefined}>${label}</a>`)}
      </nav>
      <span class=${`live ${live}`} role="status" data-testid="live">${live === "live" ? "● live" : live === "connecting" ? "connecting…" : "reconnecting…"}</span>
    </header>
    <main id="main" tabindex="-1"><${View} profiles=${profiles} reload=${loadProfiles} /></main>
  `;
}

render(html`<${App} />`, document.getElementById("app"));
// The first meaningful paint, for the benchmark (scripts/bench/dashboard.mjs).
performance.mark("app-rendered");
