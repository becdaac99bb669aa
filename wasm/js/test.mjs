// test.mjs — checks caskg.js's API in Node; the Go test TestJSModule (wasm/host) runs it with a
// freshly built module and the sample artifact:
//
//   node wasm/js/test.mjs MODULE.wasm ARTIFACT.skg SKILLS
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Caskg, CaskgError } from "./caskg.js";

const [wasmPath, artifactPath, skills] = process.argv.slice(2);
const wasm = await readFile(wasmPath);
const artifact = await readFile(artifactPath);

async function rejects(promise, message) {
  await assert.rejects(promise, (err) => err instanceof CaskgError && err.message.includes(message));
}
function throws(fn, message) {
  assert.throws(fn, (err) => err instanceof CaskgError && err.message.includes(message));
}

// Every kind of source loads: bytes, ArrayBuffer, a Response (served without the wasm content
// type, so not streamed), a file: URL, and a module compiled once.
const compiled = await Caskg.compile(wasm);
const sources = [
  [wasm, artifact],
  [wasm.buffer.slice(wasm.byteOffset, wasm.byteOffset + wasm.byteLength), new Uint8Array(artifact).buffer],
  [new Response(wasm), new Response(artifact)],
  [pathToFileURL(wasmPath), pathToFileURL(artifactPath).href],
  [compiled, artifact],
  // In Node a string that is not a URL is a file path: absolute, or relative to the working
  // directory (the Go test runs this with absolute paths).
  [wasmPath, artifactPath],
  [compiled, path.relative(process.cwd(), artifactPath)],
  [compiled, "./" + path.relative(process.cwd(), artifactPath)],
];
for (const [w, a] of sources) {
  const engine = await Caskg.load(w, a);
  assert.equal(engine.info().skills, Number(skills));
  engine.close();
}

const engine = await Caskg.load(compiled, artifact);
const info = engine.info();
assert.equal(info.bytes, artifact.length);
assert.match(info.format, /^\d+\.\d+$/);
assert.match(info.module.version, /^\d+\.\d+\.\d+/);
assert.equal(typeof info.params, "object");

const res = engine.query("heat some egg and put it in the garbage can", { k: 4 });
assert.equal(res.results.length, 4);
assert.ok(res.results[0].score >= res.results[3].score);
// A k or seeds of 0 is refused, not read as the default.
throws(() => engine.query("heat some egg", { k: 0 }), 'engine: field "k": 0 is outside [1, 1000]');
throws(() => engine.query("heat some egg", { seeds: 0 }), 'engine: field "seeds": 0 is outside [1, 100]');
// The match strength: the answer's, each result's score times it, and min_score.
assert.ok(res.match > 0.4 && res.match <= 1);
assert.equal(res.results[0].match, res.results[0].score * res.match);
const weak = engine.query("purple elephant bicycle sandwich", { min_score: 0.4 });
assert.equal(weak.results.length, 0);
assert.match(weak.note, /no skill matches this task well/);
const lexical = engine.query("heat some egg", { k: 3, no_graph: true });
assert.equal(lexical.results.length, 3);
assert.equal(lexical.results[0].seed_rank, 1);
assert.deepEqual(JSON.parse(engine.queryJSON(JSON.stringify({ query: "heat some egg", k: 3, no_graph: true }))), lexical);
// query builds its answer from the module's tape (wasm/internal/wire/tape.go), queryJSON returns
// the JSON: the two give the same value, member for member in the same order, whatever an answer
// holds (Via, a rendered bundle, a note).
const held = new Set();
for (const [text, options] of [
  ["heat some egg and put it in the garbage can", { k: 10 }],
  ["heat some egg", { k: 3, render: true }],
  ["purple elephant bicycle sandwich", {}],
  ["put a clean mug in the coffee machine", { k: 20, seeds: 3 }],
  ["egg", { k: 1, no_graph: true }],
  ["egg", { query: "ignored: the text argument is the query", k: 2 }],
  ["egg", Object.assign(Object.create(null), { k: 2 })],
]) {
  const value = engine.query(text, options);
  assert.equal(JSON.stringify(value), JSON.stringify(JSON.parse(engine.queryJSON(JSON.stringify({ ...options, query: text })))));
  for (const k of Object.keys(value)) held.add(k);
  for (const r of value.results) for (const k of Object.keys(r)) held.add(k);
}
for (const k of ["via", "rendered", "note", "seed_rank", "residual"]) assert.ok(held.has(k), `no answer held ${k}`);
// A filter passes through to the engine: a denied skill is never returned.
const filtered = engine.query("heat some egg", { k: 3, filter: { deny: ["heat-*"] } });
assert.equal(filtered.results.length, 3);
assert.ok(filtered.results.every((r) => !r.name.startsWith("heat-")));

// Refusals are CaskgErrors and leave the engine working.
throws(() => engine.query("egg", { filter: { allow: ["a["] } }), 'field "filter.allow[0]"');
throws(() => engine.query("  "), "engine: empty query");
throws(() => engine.query("egg", { k: 0.5 }), 'field "k"');
throws(() => engine.query("egg", { nograph: true }), 'field "nograph": unknown field');
// Options pass through unchanged: a typed-array vector arrives as a JSON array, and the engine,
// not this wrapper, judges it.
try {
  engine.query("egg", { vector: new Float32Array([0.5, 0.25]) });
} catch (err) {
  assert.ok(err instanceof CaskgError);
  assert.doesNotMatch(err.message, /reactor: request/);
}

// Memory grows under long queries; every call must see the current buffer.
const long = Array.from({ length: 6000 }, (_, i) => `qz${"abcdefghij"[i % 10].repeat(3 + (i % 5))}${i}`).join(" ");
for (let i = 0; i < 20; i++) engine.query(long.slice(0, 60000 - i), { k: 50 });
assert.deepEqual(engine.query("heat some egg", { k: 3, no_graph: true }), lexical);
// Requests share one module buffer that grows when a request does not fit: a multi-byte text
// arrives whole (the engine counts its UTF-8 bytes), and a short request after it is answered as
// before.
const wide = "é漢😀".repeat(7282); // 9 UTF-8 bytes and 4 UTF-16 units a repeat: 65,538 bytes
throws(() => engine.query(wide), `engine: field "query": ${Buffer.byteLength(wide)} bytes, at most 65536`);
assert.ok(Array.isArray(engine.query("egg " + wide.slice(0, 20000)).results)); // 45,004 bytes: the buffer grows
assert.deepEqual(engine.query("heat some egg", { k: 3, no_graph: true }), lexical);

engine.close();
throws(() => engine.query("egg"), "engine is closed");
engine.close(); // closing twice is fine

await rejects(Caskg.load(wasm, new Uint8Array([1, 2, 3])), "graphs: not a caskg artifact");
await rejects(Caskg.load(wasm, artifact.subarray(0, 100)), "graphs: artifact truncated");
await rejects(Caskg.load(wasm, 42), "want bytes, an ArrayBuffer, a Response or a URL");
// A path that names no file says which, not "Invalid URL".
await assert.rejects(Caskg.load(compiled, "./no-such.skg"), (err) => err.code === "ENOENT" && err.message.includes("no-such.skg"));
console.log("ok");
