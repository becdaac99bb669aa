// bench-peers.mjs — caskg beside the JavaScript search libraries a developer would pick instead,
// in one Node process, on one library: `make bench` (caskg-bench) runs it once per library size.
//
//   node --expose-gc wasm/js/bench-peers.mjs --wasm bin/caskg.wasm --artifact LIB.skg
//        --docs LIB.docs.jsonl --tasks TASKS.jsonl --peers .cache/peers [--rounds 3]
//        [--min-time 2] [--budget 60] [--json]
//
// Every system gets the same text per skill (--docs: JSONL {"name", "text"}, written by
// caskg-bench from the library the artifact was built from) and the same queries: each task's
// full text, and the same text cut to its first 12 words, as agents' short queries. caskg answers
// from its artifact through caskg.js, with its graph and with no_graph; MiniSearch, Orama and
// FlexSearch index the texts here (the versions `make peers` installs into --peers). Per system:
// load or index time, JS heap (and WASM memory), JS + WASM bytes, and per query kind the median and
// 95th percentile of one top-10 query and R@10 and COMP@10 against the tasks' gold (as
// ../shared/tools/score.py computes them).
//
// Timing per system and query kind: a first pass over every task gives the rankings scored for
// quality; then, after a garbage collection, passes of every task are timed: --rounds of them, or
// more until --min-time seconds of timed passes have gone by (so that the fast systems' medians
// rest on thousands of samples, not a few hundred), and never past the first once --budget
// seconds have run out. A system whose first pass alone outruns the budget stops there: its
// latencies are that pass's, and its quality counts only the tasks it answered (shown as
// "tasks" below the full count).
//
// --json prints one line for caskg-bench: {"skills", "docs", "tasks", "systems": [...]} (times in ms).
import { readFile } from "node:fs/promises";
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { gzipSync } from "node:zlib";
import { Caskg } from "./caskg.js";

const here = dirname(fileURLToPath(import.meta.url));

/** The pinned peers: package, version, the ES module Node loads, and how to index and query. */
const PEERS = [
  { system: "FlexSearch", pkg: "flexsearch", version: "0.8.212", entry: "dist/flexsearch.bundle.module.min.mjs",
    setup: flexsearch },
  { system: "MiniSearch", pkg: "minisearch", version: "7.2.0", entry: "dist/es/index.js", setup: minisearch },
  { system: "Orama", pkg: "@orama/orama", version: "3.1.18", entry: "dist/esm/index.js", setup: orama },
];

function usage(msg) {
  console.error(`bench-peers: ${msg}`);
  console.error("usage: node --expose-gc bench-peers.mjs --wasm M.wasm --artifact A.skg --docs D.jsonl --tasks T.jsonl --peers DIR [--rounds N] [--min-time S] [--budget S] [--json]");
  process.exit(2);
}

function parseArgs(argv) {
  const a = { rounds: 3, "min-time": 0, budget: 60, json: false };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i];
    if (k === "--json") { a.json = true; continue; }
    if (!k.startsWith("--") || i + 1 >= argv.length) usage(`bad argument ${k}`);
    a[k.slice(2)] = argv[++i];
  }
  for (const k of ["wasm", "artifact", "docs", "tasks", "peers"]) if (!a[k]) usage(`--${k} is required`);
  a.rounds = Number(a.rounds);
  a.budget = Number(a.budget);
  a.minTime = Number(a["min-time"]);
  if (!(a.rounds >= 1) || !(a.budget > 0)) usage("--rounds and --budget must be positive");
  if (!(a.minTime >= 0)) usage("--min-time must be a number of seconds, 0 or more");
  return a;
}

const readJSONL = async (path) =>
  (await readFile(path, "utf8")).split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l));

/** The first n whitespace-separated words of text. */
export const firstWords = (text, n) => text.trim().split(/\s+/).slice(0, n).join(" ");

/** R@k and COMP@k over the tasks answered, as score.py's metrics(): tasks without gold skipped. */
export function quality(tasks, ranked, k = 10) {
  let n = 0, recall = 0, complete = 0;
  for (let i = 0; i < ranked.length; i++) {
    const gold = new Set(tasks[i].gold || []);
    if (gold.size === 0) continue;
    n++;
    const top = new Set(ranked[i].slice(0, k));
    let hit = 0;
    for (const g of gold) if (top.has(g)) hit++;
    recall += hit / gold.size;
    if (hit === gold.size) complete++;
  }
  return { tasks: n, r10: n ? recall / n : 0, comp10: n ? complete / n : 0 };
}

const gc = () => { globalThis.gc?.(); globalThis.gc?.(); };
const heapUsed = () => { gc(); return process.memoryUsage().heapUsed; };

function percentile(xs, p) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

/**
 * Times search (query text -> names, best first) over queries as the file comment says, within
 * budgetMs: first pass ranked and scored, then rounds timed passes, or more until minMs of them.
 */
export async function measure(search, tasks, queries, rounds, budgetMs, minMs = 0) {
  const start = performance.now();
  const ranked = [];
  const first = [];
  for (const q of queries) {
    const t = performance.now();
    let names = search(q);
    if (names && typeof names.then === "function") names = await names; // no microtask for a synchronous search
    ranked.push(names);
    first.push(performance.now() - t);
    if (performance.now() - start > budgetMs) break;
  }
  let times = [];
  if (ranked.length === queries.length) {
    if (typeof gc === "function") gc();
    const timed = performance.now();
    const more = (r) => r < rounds || performance.now() - timed < minMs;
    for (let r = 0; more(r) && (r === 0 || performance.now() - start < budgetMs); r++) {
      for (const q of queries) {
        const t = performance.now();
        const res = search(q);
        if (res && typeof res.then === "function") await res;
        times.push(performance.now() - t);
      }
    }
  } else {
    times = first;
  }
  return { queries: times.length, median: percentile(times, 0.5), p95: percentile(times, 0.95), ...quality(tasks, ranked) };
}

async function flexsearch(lib, docs) {
  const index = new lib.Index();
  for (let i = 0; i < docs.length; i++) index.add(i, docs[i].text);
  // suggest: rank partial matches too; without it a many-word query matches only skills with every word.
  return (q) => index.search(q, { limit: 10, suggest: true }).map((i) => docs[i].name);
}

async function minisearch(lib, docs) {
  const MiniSearch = lib.default;
  const ms = new MiniSearch({ fields: ["text"], idField: "id" });
  ms.addAll(docs.map((d, i) => ({ id: i, text: d.text })));
  return (q) => ms.search(q).slice(0, 10).map((r) => docs[r.id].name);
}

async function orama(lib, docs) {
  const db = await lib.create({ schema: { text: "string" } });
  const inserted = lib.insertMultiple(db, docs.map((d, i) => ({ id: String(i), text: d.text })));
  if (inserted && typeof inserted.then === "function") await inserted;
  const names = (res) => res.hits.map((h) => docs[Number(h.id)].name);
  return (q) => {
    const res = lib.search(db, { term: q, limit: 10 });
    return res && typeof res.then === "function" ? res.then(names) : names(res);
  };
}

/** The files of an ES module's static graph of relative imports, entry first. */
export function moduleFiles(entry) {
  const seen = [resolve(entry)];
  const spec = /(?:\bimport|\bexport)\s*(?:[\w*{}\s,$]+from\s*)?["'](\.{1,2}\/[^"']+)["']|\bimport\(\s*["'](\.{1,2}\/[^"']+)["']\s*\)/g;
  for (let i = 0; i < seen.length; i++) {
    const src = readFileSync(seen[i], "utf8");
    for (const m of src.matchAll(spec)) {
      const f = resolve(dirname(seen[i]), m[1] || m[2]);
      if (!seen.includes(f) && existsSync(f)) seen.push(f);
    }
  }
  return seen;
}

/** Raw and gzip -9 bytes of files, counted each on its own and summed. */
function codeBytes(files) {
  let raw = 0, gzip = 0;
  for (const f of files) {
    const b = readFileSync(f);
    raw += b.length;
    gzip += gzipSync(b, { level: 9 }).length;
  }
  return { raw, gzip, files: files.length };
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const tasks = await readJSONL(a.tasks);
  const docs = await readJSONL(a.docs);
  const kinds = { full: tasks.map((t) => t.query), words12: tasks.map((t) => firstWords(t.query, 12)) };
  const budgetMs = a.budget * 1000;
  const rows = [];
  const log = (s) => process.stderr.write(`bench-peers: ${s}\n`);

  // caskg: compile and instantiate the module, load the artifact.
  {
    const wasm = await readFile(a.wasm);
    let artifact = await readFile(a.artifact);
    const before = heapUsed();
    const t = performance.now();
    const module = await Caskg.compile(wasm);
    const compileMs = performance.now() - t;
    const engine = await Caskg.load(module, artifact);
    const loadMs = performance.now() - t;
    artifact = null;
    const heap = heapUsed() - before;
    const wasmMemory = engine.inst.x.memory.buffer.byteLength;
    const skills = engine.info().skills;
    const code = codeBytes([...moduleFiles(join(here, "caskg.js")), resolve(a.wasm)]);
    for (const [variant, opts] of [["graph", { k: 10 }], ["no_graph", { k: 10, no_graph: true }]]) {
      const row = { system: "caskg", variant, version: String(engine.version?.version ?? ""), load_ms: loadMs, compile_ms: compileMs, heap_bytes: heap, wasm_bytes: wasmMemory,
        code, skills, kinds: {} };
      for (const [kind, queries] of Object.entries(kinds)) {
        row.kinds[kind] = await measure((q) => engine.query(q, opts).results.map((r) => r.name), tasks, queries, a.rounds, budgetMs, a.minTime * 1000);
        log(`caskg ${variant} ${kind}: median ${row.kinds[kind].median.toFixed(3)} ms, COMP@10 ${row.kinds[kind].comp10.toFixed(3)}`);
      }
      rows.push(row);
    }
    engine.close();
  }

  for (const p of PEERS) {
    const dir = join(resolve(a.peers), "node_modules", p.pkg);
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
    if (pkg.version !== p.version) throw new Error(`bench-peers: ${p.pkg} is ${pkg.version}, want ${p.version} (make peers)`);
    const entry = join(dir, p.entry);
    const lib = await import(pathToFileURL(entry).href);
    const before = heapUsed();
    const t = performance.now();
    let search = await p.setup(lib, docs);
    const loadMs = performance.now() - t;
    const heap = heapUsed() - before;
    const row = { system: p.system, variant: "", version: p.version, load_ms: loadMs, heap_bytes: heap, wasm_bytes: 0,
      code: codeBytes(moduleFiles(entry)), skills: docs.length, kinds: {} };
    for (const [kind, queries] of Object.entries(kinds)) {
      row.kinds[kind] = await measure(search, tasks, queries, a.rounds, budgetMs, a.minTime * 1000);
      log(`${p.system} ${kind}: median ${row.kinds[kind].median.toFixed(3)} ms over ${row.kinds[kind].queries}, COMP@10 ${row.kinds[kind].comp10.toFixed(3)} on ${row.kinds[kind].tasks}`);
    }
    rows.push(row);
    search = null;
    gc();
  }

  const out = { skills: docs.length, docs: docs.length, tasks: tasks.filter((t) => (t.gold || []).length).length, node: process.version,
    budget_s: a.budget, rounds: a.rounds, min_time_s: a.minTime, systems: rows };
  if (a.json) {
    console.log(JSON.stringify(out));
    return;
  }
  console.log(`node ${process.version}: ${docs.length} skills, ${tasks.length} tasks`);
  for (const r of rows) {
    const k = (x) => `${x.median.toFixed(3)} ms (p95 ${x.p95.toFixed(3)}) R@10 ${x.r10.toFixed(3)} COMP@10 ${x.comp10.toFixed(3)}`;
    console.log(`${(r.system + " " + r.variant).padEnd(18)} load ${r.load_ms.toFixed(1)} ms, heap ${(r.heap_bytes / 1e6).toFixed(1)} MB`);
    console.log(`  full     ${k(r.kinds.full)}`);
    console.log(`  12 words ${k(r.kinds.words12)}`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main();
}
