#!/usr/bin/env node
// Compares the full-text libraries considered for the session index on the benchmark's corpus
// (2,000 sessions, 200,000 messages): build time, query p50/p95, serialized size, load time.
// MiniSearch is a dependency; FlexSearch is not: install it next to this checkout without saving
// (`npm i --no-save flexsearch@0.8.212`) or point FLEXSEARCH at its module file.
import { performance } from "node:perf_hooks";
import MiniSearch from "minisearch";
import { stemmer } from "stemmer";
import { queries, sessions } from "./session-search-data.mjs";

const pct = (xs, p) => xs.slice().sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))];
const ms = (x) => `${x.toFixed(2)} ms`;
const docs = [];
for (const s of sessions()) for (let i = 0; i < s.messages.length; i++) docs.push({ id: `${s.id}#${i}`, text: s.messages[i].content });
const qs = queries(300);
const out = {};

{
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
}

try {
  const mod = await import(process.env.FLEXSEARCH ?? "flexsearch");
  const { Index, Encoder, Charset } = mod.default ?? mod;
  const en = await import(process.env.FLEXSEARCH_EN ?? "flexsearch/lang/en").then((m) => m.default ?? m);
  const make = () => new Index({ tokenize: "forward", resolution: 9, encoder: new Encoder(Charset.LatinBalance, en) });
  let t = performance.now();
  const flex = make();
  for (let i = 0; i < docs.length; i++) flex.add(i, docs[i].text);
  const build = performance.now() - t;
  let hits = 0;
  const times = qs.map((q) => {
    const t0 = performance.now();
    hits += flex.search(q, { limit: 50, suggest: true }).length;
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
  out.flexsearch = { hits, build: ms(build), p50: ms(pct(times, 50)), p95: ms(pct(times, 95)), bytes, save: ms(save), load: ms(load) };
} catch (error) {
  out.flexsearch = `not measured: ${error.message}`;
}
console.log(JSON.stringify({ messages: docs.length, queries: qs.length, ...out }, null, 2));
