# workerd configuration of caskg's edge worker, for local serving and the end-to-end tests.
# make worker copies it into bin/worker beside the bundle it names; run workerd from that
# folder (make worker-dev does), since the disk services' paths are relative to where it runs:
#
#   workerd serve workerd.capnp                  the worker, its artifact a static asset
#   workerd serve workerd.capnp feedback         POST /v1/feedback into a local KV store
#   --socket-addr http=127.0.0.1:9000            another address
#   --directory-path feedback-kv=/some/dir       where the feedback config keeps its KV entries
#   --directory-path assets=/some/dir            where the static assets are (default: assets)
#
# The artifact is a static asset: the "assets" disk service, bound to the worker as ASSETS, as
# wrangler.toml's [assets] binds it on Cloudflare. Only the worker is on the socket, so the
# asset reaches no client (Cloudflare's run_worker_first = true). With make worker
# WORKER_EMBED=1, artifact.mjs imports the artifact as a data module instead (caskg.skg).
#
# The feedback config binds a Workers KV namespace as CASKG_FEEDBACK, the binding the worker
# stores feedback in (one entry per report; see wasm/worker/feedback.go), and the reporters'
# bearer tokens as CASKG_FEEDBACK_TOKENS from workerd's environment variable of that name
# ("NAME TOKEN" entries, ';' between them): without tokens the worker takes no report (403).
# workerd sends a KV namespace's operations as HTTP requests to the service bound, here a
# writable directory: each entry is a file named by its key, holding the trace line.
#
# Deploying to Cloudflare uses wrangler.toml at the repository's root instead.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [
    (name = "caskg", worker = .worker),
    (name = "assets", disk = (path = "assets")),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "caskg")],
);

const feedback :Workerd.Config = (
  services = [
    (name = "caskg", worker = .feedbackWorker),
    (name = "assets", disk = (path = "assets")),
    (name = "feedback-kv", disk = (path = "feedback", writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "caskg")],
);

const worker :Workerd.Worker = (
  modules = .modules,
  compatibilityDate = "2026-11-01",
  bindings = [(name = "ASSETS", service = "assets")],
);

const feedbackWorker :Workerd.Worker = (
  modules = .modules,
  compatibilityDate = "2026-11-01",
  bindings = [
    (name = "ASSETS", service = "assets"),
    (name = "CASKG_FEEDBACK", kvNamespace = "feedback-kv"),
    (name = "CASKG_FEEDBACK_TOKENS", fromEnvironment = "CASKG_FEEDBACK_TOKENS"),
  ],
);

const modules :List(Workerd.Worker.Module) = [
  (name = "entry.mjs", esModule = embed "entry.mjs"),
  (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
  (name = "app.wasm", wasm = embed "app.wasm"),
  (name = "artifact.mjs", esModule = embed "artifact.mjs"),
];
