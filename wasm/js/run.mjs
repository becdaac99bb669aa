#!/usr/bin/env node
// run.mjs — answers caskg requests in Node through caskg.js: one request JSON a line in
// ({"query", "k", "seeds", "gamma", "no_graph", …}), one response JSON a line out, or
// {"error": "..."} for a request the engine refuses. The Go parity tests drive it.
//
//   node wasm/js/run.mjs bin/caskg.wasm bin/sample.skg [REQUESTS.jsonl]   (stdin without a file)
import { readFile } from "node:fs/promises";
import { Caskg, CaskgError } from "./caskg.js";

const [wasm, artifact, requests] = process.argv.slice(2);
if (!wasm || !artifact) {
  console.error("usage: node run.mjs MODULE.wasm ARTIFACT.skg [REQUESTS.jsonl]");
  process.exit(2);
}

async function readInput(path) {
  if (path) return readFile(path, "utf8");
  let text = "";
  for await (const chunk of process.stdin) text += chunk;
  return text;
}

const engine = await Caskg.load(readFile(wasm), readFile(artifact));
const out = [];
for (const line of (await readInput(requests)).split("\n")) {
  if (line.trim() === "") continue;
  const { query, ...options } = JSON.parse(line);
  try {
    out.push(JSON.stringify(engine.query(query, options)));
  } catch (err) {
    if (!(err instanceof CaskgError)) throw err;
    out.push(JSON.stringify({ error: err.message }));
  }
}
engine.close();
process.stdout.write(out.join("\n") + (out.length ? "\n" : ""));
