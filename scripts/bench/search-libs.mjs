#!/usr/bin/env node
// Compares the full-text libraries considered for the session index on the benchmark's corpus
// (2,000 sessions, 200,000 messages): build time, query p50/p95, serialized size, load time.
// FlexSearch is a dependency (measured as the daemon uses it: `strict` terms stemmed by us, and
// with its `forward` tokenizer); MiniSearch is not: install it next to this checkout without
// saving (`npm i --no-save minisearch@7.2.0`) or point MINISEARCH at its module file.
import { Index } from "flexsearch";
import { performance } from "node:perf_hooks";
import { stemmer } from "stemmer";
import { queries, sessions } from "./session-search-data.mjs";

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x) => `${x.toFixed(2)} ms`;
const docs = [];
for (const s of sessions()) for (let i = 0; i < s.messages.length; i++) docs.push({ id: `${s.id}#${i}`, text: s.messages[i].content });
const qs = queries(300);
const out = {};

try {
  const mod = await import(process.env.MINISEARCH ?? "minisearch");
  const MiniSearch = mod.default ?? mod;
  const options = { fields: ["text"], processTerm: (t) => stemmer(t.toLowerCase()), searchOptions: { prefix: true, combineWith: "OR" } };
  let t = performance.now();
  const mini = new MiniSearch(options);
  mini.addAll(docs);
  const build = performance.now() - t;
  let hits = 0;
  const times = qs.map((q) => {
    const t0 = performance.now();
    hits += mini.search(q).slice(0, 50).length;
    return performance.now() - t0;
  });
  t = performance.now();
  const json = JSON.stringify(mini);
  const save = performance.now() - t;
  t = performance.now();
  MiniSearch.loadJSON(json, options);
  const load = performance.now() - t;
  out.minisearch = { hits, build: ms(build), p50: ms(pct(times, 50)), p95: ms(pct(times, 95)), bytes: json.length, save: ms(save), load: ms(load) };
} catch (error) {
  out.minisearch = `not measured: ${error.message}`;
}

// Each tokenizer with each query's last word as a prefix: `forward` stores every prefix;
// `strict` stores whole terms and the last word is widened over a sorted term list.
const terms = (text) =>
  text
    .split(/[\s\p{Z}\p{P}]+/u)
    .filter(Boolean)
    .map((w) => stemmer(w.toLowerCase()));
for (const tokenize of ["strict", "forward"]) {
  const make = () => new Index({ tokenize, resolution: 9, encode: (text) => text.split(" ").filter(Boolean) });
  let t = performance.now();
  const flex = make();
  const vocabulary = new Set();
  for (let i = 0; i < docs.length; i++) {
    const ts = terms(docs[i].text);
    for (const x of ts) vocabulary.add(x);
    flex.add(i, ts.join(" "));
  }
  const sorted = [...vocabulary].sort();
  const build = performance.now() - t;
  const widen = (word) => {
    let lo = 0;
    let hi = sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (sorted[mid] < word) lo = mid + 1;
      else hi = mid;
    }
    const out = [];
    for (let i = lo; i < sorted.length && out.length < 24 && sorted[i].startsWith(word); i++) out.push(sorted[i]);
    return out.length ? out : [word];
  };
  let hits = 0;
  const times = qs.map((q) => {
    const t0 = performance.now();
    const ws = terms(q);
    const head = ws.slice(0, -1).join(" ");
    const lasts = tokenize === "strict" ? widen(ws.at(-1) ?? "") : [ws.at(-1) ?? ""];
    const found = new Set();
    for (const last of lasts) for (const id of flex.search(`${head} ${last}`, { limit: 1000 })) found.add(id);
    hits += Math.min(50, found.size);
    return performance.now() - t0;
  });
  t = performance.now();
  const parts = [];
  await flex.export((key, data) => parts.push([key, data]));
  const save = performance.now() - t;
  const bytes = parts.reduce((n, [k, d]) => n + k.length + (d ? d.length : 0), 0);
  t = performance.now();
  const back = make();
  for (const [k, d] of parts) await back.import(k, d);
  const load = performance.now() - t;
  out[`flexsearch_${tokenize}`] = { hits, build: ms(build), p50: ms(pct(times, 50)), p95: ms(pct(times, 95)), bytes, save: ms(save), load: ms(load) };
}
console.log(JSON.stringify({ messages: docs.length, queries: qs.length, ...out }, null, 2));
