// Deterministic synthetic sessions for the session-search benchmark: a Zipf-ish vocabulary of
// real English stems with inflections and generated words, so stemming and prefixes matter.

const STEMS = (
  "build deploy test debug index search session branch merge commit review render parse compile " +
  "cache queue worker daemon socket config profile kanban cron schedule backup restore import export " +
  "token model prompt answer stream retry timeout error failure crash restart reload memory skill bundle " +
  "file folder path write read patch lint format terminal command output input network server client " +
  "request response header payload database table column migration schema version release tag update " +
  "install package module function class method variable argument parameter result value string number " +
  "array object record field key lock journal snapshot chunk window anchor bookend paging limit clamp"
).split(" ");
const SUFFIXES = ["", "", "", "s", "ed", "ing", "er", "ers"];

export function rng(seed) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const STOP = "the a to of and is it in that for on with as this be are was at by or not".split(" ");

/** Stop words first (the most frequent), then stem forms and generated words shuffled together. */
export function vocabulary(rand, size = 8000) {
  const words = [];
  for (const stem of STEMS) for (const suffix of SUFFIXES) words.push(stem.endsWith("e") && suffix.startsWith("e") ? stem + suffix.slice(1) : stem + suffix);
  const letters = "abcdefghijklmnopqrstuvwxyz";
  while (words.length < size) {
    let w = "";
    const n = 4 + Math.floor(rand() * 6);
    for (let i = 0; i < n; i++) w += letters[Math.floor(rand() * 26)];
    words.push(w);
  }
  for (let i = words.length - 1; i > 0; i--) {
    const j = Math.floor(rand() * (i + 1));
    [words[i], words[j]] = [words[j], words[i]];
  }
  return [...STOP, ...words];
}

/** A message text of 15..45 words, word ranks drawn Zipf-like. */
export function sentence(rand, words) {
  const n = 15 + Math.floor(rand() * 30);
  const out = [];
  for (let i = 0; i < n; i++) out.push(words[Math.floor(words.length * rand() ** 3)]);
  return out.join(" ");
}

/** Yields {id, messages} for `sessions` sessions holding `total` messages (alternating user/assistant). */
export function* sessions({ sessions = 2000, total = 200_000, seed = 7 } = {}) {
  const rand = rng(seed);
  const words = vocabulary(rand);
  const per = Math.floor(total / sessions);
  const t0 = Date.UTC(2026, 0, 1);
  for (let s = 0; s < sessions; s++) {
    const messages = [];
    const start = t0 + s * 3_600_000;
    for (let i = 0; i < per; i++) messages.push({ role: i % 2 ? "assistant" : "user", content: sentence(rand, words), at: start + i * 1000 });
    yield {
      id: `s_bench_${String(s).padStart(5, "0")}`,
      title: messages[0].content.split(" ").slice(0, 6).join(" "),
      createdAt: start,
      updatedAt: start + per * 1000,
      messages,
    };
  }
}

/** Queries: single stems, inflected forms, two-word queries and prefixes. */
export function queries(n = 200, seed = 11) {
  const rand = rng(seed);
  const out = [];
  for (let i = 0; i < n; i++) {
    const a = STEMS[Math.floor(rand() * STEMS.length)];
    const b = STEMS[Math.floor(rand() * STEMS.length)];
    const k = i % 4;
    out.push(k === 0 ? a : k === 1 ? `${a}ing` : k === 2 ? `${a} ${b}` : a.slice(0, 4));
  }
  return out;
}
