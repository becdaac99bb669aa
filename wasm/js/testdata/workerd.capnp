# workerd configuration of TestWorkerd: caskg.js, the module and the sample artifact as the
# worker's modules, as a Workers project imports them.
using Workerd = import "/workerd/workerd.capnp";

const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:0", http = (), service = "main")],
);

const worker :Workerd.Worker = (
  modules = [
    (name = "worker.mjs", esModule = embed "worker.mjs"),
    (name = "caskg.js", esModule = embed "caskg.js"),
    (name = "caskg.wasm", wasm = embed "caskg.wasm"),
    (name = "sample.skg", data = embed "sample.skg"),
  ],
  compatibilityDate = "2026-11-01",
);
