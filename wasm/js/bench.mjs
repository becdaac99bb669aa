// bench.mjs — Node's side of `make bench-wasm`: module compile time, artifact load time and
// per-query latency through caskg.js (request JSON in, parsed response out).
//
//   node wasm/js/bench.mjs MODULE.wasm ARTIFACT.skg TASKS.jsonl [K] [ROUNDS] [MIN_SECONDS] [--json]
//
// Each kind of query gets a warm-up pass, then ROUNDS timed passes (5), or more until MIN_SECONDS
// of them have gone by (0).
//
// --json prints one line for caskg-bench: {"queries", "median", "p95", "load", "compile"} in ms,
// and "words12": {"queries", "median", "p95"}, the same tasks cut to their first 12 words.
import { readFile } from "node:fs/promises";
import { Caskg } from "./caskg.js";

const args = process.argv.slice(2);
const asJSON = args.includes("--json");
const [wasmPath, artifactPath, tasksPath, k = "10", rounds = "5", minSeconds = "0"] = args.filter((a) => a !== "--json");
if (!tasksPath) {
  console.error("usage: node bench.mjs MODULE.wasm ARTIFACT.skg TASKS.jsonl [K] [ROUNDS] [MIN_SECONDS]");
  process.exit(2);
}
const wasm = await readFile(wasmPath);
const artifact = await readFile(artifactPath);
const queries = (await readFile(tasksPath, "utf8"))
  .split("\n")
  .filter((l) => l.trim())
  .map((l) => JSON.parse(l).query);

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
const ms = (x) => `${x.toFixed(3).padStart(9)} ms`;

let t = performance.now();
const module = await Caskg.compile(wasm);
const compileMs = performance.now() - t;

const loads = [];
let engine;
for (let i = 0; i < 5; i++) {
  engine?.close();
  t = performance.now();
  engine = await Caskg.load(module, artifact); // a fresh instance each time
  loads.push(performance.now() - t);
}

const options = { k: Number(k) };
/** One warm-up pass (tiering, memory growth), then the timed passes: each query's ms. */
function time(qs) {
  for (const q of qs) engine.query(q, options);
  const times = [];
  const start = performance.now();
  for (let r = 0; r < Number(rounds) || performance.now() - start < Number(minSeconds) * 1000; r++) {
    for (const q of qs) {
      t = performance.now();
      engine.query(q, options);
      times.push(performance.now() - t);
    }
  }
  return times;
}
const times = time(queries);
const short = time(queries.map((q) => q.trim().split(/\s+/).slice(0, 12).join(" ")));
const info = engine.info();
engine.close();

const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.95)];
if (asJSON) {
  console.log(JSON.stringify({ queries: times.length, median: median(times), p95: p95(times),
    load: median(loads), compile: compileMs, words12: { queries: short.length, median: median(short), p95: p95(short) } }));
  process.exit(0);
}
console.log(`node ${process.version}: ${info.skills} skills, ${artifact.length} bytes, ${queries.length} queries × ${rounds} rounds, k=${k}`);
console.log(`compile  ${ms(compileMs)}`);
console.log(`load     ${ms(median(loads))}  median of ${loads.length} (instantiate, start the Go runtime, load)`);
console.log(`query    ${ms(median(times))}  median, ${ms(mean(times)).trim()} mean`);
console.log(`12 words ${ms(median(short))}  median, ${ms(mean(short)).trim()} mean`);
