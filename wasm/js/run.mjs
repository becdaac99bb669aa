#!/usr/bin/env node
// run.mjs — answers caskg requests in Node through caskg.js: one request JSON a line in
// ({"query", "k", "seeds", "gamma", "no_graph", …}), one response JSON a line out, or
// {"error": "..."} for a line that is not a request object or a request the engine refuses,
// each written as it is answered: one bad line costs its own answer only. The Go parity tests
// drive it.
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
const lines = (await readInput(requests)).split("\n");
for (const [i, line] of lines.entries()) {
  if (line.trim() === "") continue;
  let answer;
  try {
    let req;
    try {
      req = JSON.parse(line);
    } catch (err) {
      throw new CaskgError(`line ${i + 1}: not JSON: ${err.message}`);
    }
    if (req === null || typeof req !== "object" || Array.isArray(req)) {
      throw new CaskgError(`line ${i + 1}: not a request object`);
    }
    const { query, ...options } = req;
    answer = engine.query(query, options);
  } catch (err) {
    if (!(err instanceof CaskgError)) throw err;
    answer = { error: err.message };
  }
  process.stdout.write(JSON.stringify(answer) + "\n");
}
engine.close();
