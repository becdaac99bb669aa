// entry.mjs — the Cloudflare Worker entry of caskg's edge worker (wasm/worker).
//
// It replaces syumai/workers' generated worker.mjs, which instantiates the Go program for every
// request: Go's runtime start and the artifact's decoding would then be paid each time. Here the
// program starts once per isolate and every request of the isolate goes to its handler; the
// program never returns (main blocks), and if it dies the next request starts a new one.
// CASKG_INSTANCE = "per-request" (a text binding) restores the stock behaviour, to measure it.
//
// make worker puts beside this file: app.wasm (the Go program), wasm_exec.js (Go's, with the
// context patch of syumai/workers, written by its workers-assets-gen) and caskg.skg (the artifact,
// a data module).
import "./wasm_exec.js";
import mod from "./app.wasm";
import artifact from "./caskg.skg";

// start runs the Go program and resolves, once its handler is set, to the object it bound
// handleRequest on and a promise of its exit.
async function start(env, ctx, persistent) {
  const go = new Go();
  const binding = {};
  let ready;
  const isReady = new Promise((resolve) => (ready = resolve));
  const instance = new WebAssembly.Instance(mod, {
    ...go.importObject,
    workers: { ready: () => ready() },
  });
  const exited = go.run(instance, { env, ctx, binding, artifact, persistent });
  await Promise.race([
    isReady,
    exited.then(() => {
      throw new Error(binding.startError || "worker: the Go program exited before serving (see the log)");
    }),
  ]);
  return { binding, exited };
}

// running is this isolate's program: a promise, so concurrent first requests share one start.
let running;

function program(env, ctx) {
  if (running === undefined) {
    running = start(env, ctx, true).then(
      (p) => {
        p.exited.then(() => (running = undefined));
        return p;
      },
      (err) => {
        running = undefined;
        throw err;
      },
    );
  }
  return running;
}

function answer(status, message) {
  return new Response(JSON.stringify({ error: message }), {
    status,
    // The headers of package api's error answers (WriteError).
    headers: {
      "content-type": "application/json; charset=utf-8",
      "x-content-type-options": "nosniff",
      "cache-control": "no-store",
      "access-control-allow-origin": "*",
    },
  });
}

// A percent sign not followed by two hex digits: Go's url.Parse rejects such a path before
// the handler runs (syumai/workers would answer 500), URL parsers of the web keep it.
const badEscape = /%(?![0-9A-Fa-f]{2})/;

export default {
  async fetch(req, env, ctx) {
    if (badEscape.test(new URL(req.url).pathname)) {
      return answer(400, "worker: malformed percent-encoding in the URL path");
    }
    try {
      const p = env.CASKG_INSTANCE === "per-request" ? await start(env, ctx, false) : await program(env, ctx);
      return await p.binding.handleRequest(req);
    } catch (err) {
      const msg = String(err && err.message ? err.message : err);
      return answer(500, msg.startsWith("worker: ") ? msg : "worker: " + msg);
    }
  },
};
