# workerd configuration of caskg's edge worker, for local serving and the end-to-end test.
# make worker copies it into bin/worker beside the bundle it names (paths are relative to it):
#
#   workerd serve bin/worker/workerd.capnp                  one Go program per isolate (default)
#   workerd serve bin/worker/workerd.capnp perRequest       a Go program per request (stock glue)
#   workerd serve bin/worker/workerd.capnp feedback         POST /v1/feedback into a local KV store
#   --socket-addr http=127.0.0.1:9000                       another address
#   --directory-path feedback-kv=/some/dir                  where the feedback config keeps its KV
#                                                           entries (an existing directory)
#
# The feedback config binds a Workers KV namespace as CASKG_FEEDBACK, the binding the worker
# stores feedback in (one entry per report; see wasm/worker/feedback.go), and the reporters'
# bearer tokens as CASKG_FEEDBACK_TOKENS from workerd's environment variable of that name
# ("NAME TOKEN" entries, ';' between them): without tokens the worker takes no report (403). workerd sends a KV
# namespace's operations as HTTP requests to the service bound, here a writable directory: each
# entry is a file named by its key, holding the trace line. The directory's path is relative to
# where workerd runs: bin/worker/feedback from the repository's root, as make worker-dev runs it
# (make worker creates it).
#
# Deploying to Cloudflare uses wrangler.toml at the repository's root instead.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "caskg", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "caskg")],
);

const perRequest :Workerd.Config = (
  services = [(name = "caskg", worker = .perRequestWorker)],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "caskg")],
);

const feedback :Workerd.Config = (
  services = [
    (name = "caskg", worker = .feedbackWorker),
    (name = "feedback-kv", disk = (path = "bin/worker/feedback", writable = true)),
  ],
  sockets = [(name = "http", address = "127.0.0.1:8787", http = (), service = "caskg")],
);

const worker :Workerd.Worker = (
  modules = .modules,
  compatibilityDate = "2026-11-01",
  bindings = [(name = "CASKG_INSTANCE", text = "isolate")],
);

const perRequestWorker :Workerd.Worker = (
  modules = .modules,
  compatibilityDate = "2026-11-01",
  bindings = [(name = "CASKG_INSTANCE", text = "per-request")],
);

const feedbackWorker :Workerd.Worker = (
  modules = .modules,
  compatibilityDate = "2026-11-01",
  bindings = [
    (name = "CASKG_INSTANCE", text = "isolate"),
    (name = "CASKG_FEEDBACK", kvNamespace = "feedback-kv"),
    (name = "CASKG_FEEDBACK_TOKENS", fromEnvironment = "CASKG_FEEDBACK_TOKENS"),
  ],
);

const modules :List(Workerd.Worker.Module) = [
  (name = "entry.mjs", esModule = embed "entry.mjs"),
  (name = "wasm_exec.js", esModule = embed "wasm_exec.js"),
  (name = "app.wasm", wasm = embed "app.wasm"),
  (name = "caskg.skg", data = embed "caskg.skg"),
];
