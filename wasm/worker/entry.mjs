// entry.mjs — the Cloudflare Worker entry of caskg's edge worker (wasm/worker).
//
// It starts the Go program once per isolate, hands it the artifact, and passes every request
// of the isolate to the handle function the program binds: method, path, query, headers and
// body in, status, headers and body out. The program never returns (main blocks); if it dies
// the next request starts a new one.
//
// The artifact is a Workers Static Asset read once per isolate through the ASSETS binding
// (wrangler.toml's [assets], run_worker_first = true, so the asset is never served to a
// client), or a data module embedded in the bundle; artifact.mjs, which make worker writes,
// says which, and the checksum the Go program holds the bytes to.
//
// make worker puts beside this file: app.wasm (the Go program), wasm_exec.js (Go's, with the
// context patch of syumai/workers, written by its workers-assets-gen) and artifact.mjs.
import "./wasm_exec.js";
import mod from "./app.wasm";
import { asset, checksum, embedded } from "./artifact.mjs";

// readArtifact returns the artifact's bytes: the embedded module, or the asset.
async function readArtifact(env) {
  if (embedded) return embedded;
  if (!env.ASSETS || typeof env.ASSETS.fetch !== "function") {
    throw new Error("worker: no ASSETS binding: the artifact is a static asset (wrangler.toml [assets] binding = \"ASSETS\")");
  }
  const resp = await env.ASSETS.fetch(new Request("https://assets.invalid/" + asset));
  if (!resp.ok) throw new Error(`worker: artifact: the ASSETS binding answered ${resp.status} for /${asset}`);
  return new Uint8Array(await resp.arrayBuffer());
}

// start runs the Go program and resolves, once its handler is bound, to that binding.
async function start(env, ctx) {
  const artifact = await readArtifact(env);
  const go = new Go();
  const binding = {};
  let ready;
  const isReady = new Promise((resolve) => (ready = resolve));
  const instance = new WebAssembly.Instance(mod, {
    ...go.importObject,
    workers: { ready: () => ready() },
  });
  const exited = go.run(instance, { env, ctx, binding, artifact, checksum });
  await Promise.race([
    isReady,
    exited.then(() => {
      throw new Error(binding.startError || "worker: the Go program exited before serving (see the log)");
    }),
  ]);
  exited.then(() => (running = undefined));
  return binding;
}

// running is this isolate's program: a promise, so concurrent first requests share one start.
let running;

function program(env, ctx) {
  if (running === undefined) {
    running = start(env, ctx).catch((err) => {
      running = undefined;
      throw err;
    });
  }
  return running;
}

function answer(status, message) {
  return new Response(JSON.stringify({ error: message }), {
    status,
    // The headers of package api's error answers.
    headers: {
      "content-type": "application/json; charset=utf-8",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      "access-control-allow-origin": "*",
    },
  });
}

// A percent sign not followed by two hex digits: Go's net/http refuses such a path before any
// handler runs, URL parsers of the web keep it; answered here as caskg serve's tests expect.
const badEscape = /%(?![0-9A-Fa-f]{2})/;

// readBody reads at most max+1 bytes of the body (the API refuses more, naming the limit).
async function readBody(req, max) {
  if (req.body === null) return undefined;
  const reader = req.body.getReader();
  const parts = [];
  let n = 0;
  while (n <= max) {
    const { done, value } = await reader.read();
    if (done) break;
    parts.push(value);
    n += value.byteLength;
  }
  reader.cancel().catch(() => {});
  const out = new Uint8Array(n);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

export default {
  async fetch(req, env, ctx) {
    const url = new URL(req.url);
    if (badEscape.test(url.pathname)) {
      return answer(400, "worker: malformed percent-encoding in the URL path");
    }
    try {
      const p = await program(env, ctx);
      const declared = req.headers.get("content-length");
      const length = declared === null ? -1 : Number(declared);
      const body = length > p.maxBody ? undefined : await readBody(req, p.maxBody);
      const r = await p.handle(req.method, url.pathname, url.search.slice(1), req.headers, body, length);
      return new Response(req.method === "HEAD" || r.status === 204 || r.status === 202 ? null : r.body, {
        status: r.status,
        headers: r.headers,
      });
    } catch (err) {
      const msg = String(err && err.message ? err.message : err);
      return answer(500, msg.startsWith("worker: ") ? msg : "worker: " + msg);
    }
  },
};
