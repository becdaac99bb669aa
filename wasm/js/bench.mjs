// bench.mjs — Node's side of `make bench-wasm`: module compile time, artifact load time and
// per-query latency through caskg.js (request JSON in, parsed response out).
//
//   node wasm/js/bench.mjs MODULE.wasm ARTIFACT.skg TASKS.jsonl [K] [ROUNDS] [--json]
//
// --json prints one line for caskg-bench: {"queries", "median", "p95", "load", "compile"} in ms.
import { readFile } from "node:fs/promises";
import { Caskg } from "./caskg.js";

const args = process.argv.slice(2);
const asJSON = args.includes("--json");
const [wasmPath, artifactPath, tasksPath, k = "10", rounds = "5"] = args.filter((a) => a !== "--json");
if (!tasksPath) {
  console.error("usage: node bench.mjs MODULE.wasm ARTIFACT.skg TASKS.jsonl [K] [ROUNDS]");
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
for (const q of queries) engine.query(q, options); // warm-up: tiering, memory growth
const times = [];
for (let r = 0; r < Number(rounds); r++) {
  for (const q of queries) {
    t = performance.now();
    engine.query(q, options);
    times.push(performance.now() - t);
  }
}
const info = engine.info();
engine.close();

if (asJSON) {
  const sorted = [...times].sort((a, b) => a - b);
  console.log(JSON.stringify({ queries: times.length, median: median(times), p95: sorted[Math.floor(sorted.length * 0.95)],
    load: median(loads), compile: compileMs }));
  process.exit(0);
}
console.log(`node ${process.version}: ${info.skills} skills, ${artifact.length} bytes, ${queries.length} queries × ${rounds} rounds, k=${k}`);
console.log(`compile  ${ms(compileMs)}`);
console.log(`load     ${ms(median(loads))}  median of ${loads.length} (instantiate, start the Go runtime, load)`);
console.log(`query    ${ms(median(times))}  median, ${ms(mean(times)).trim()} mean`);
