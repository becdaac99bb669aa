// worker.mjs — caskg.js in workerd, where import.meta.url is undefined and a module is
// compiled only from an import: TestWorkerd (workerd_test.go) serves it with workerd.capnp.
import wasm from "./caskg.wasm";
import artifact from "./sample.skg";
import { Caskg, CaskgError, moduleURL } from "./caskg.js";

export default {
  async fetch() {
    const out = { moduleURL: moduleURL === null ? null : String(moduleURL) };
    try {
      (await Caskg.load(null, artifact)).close();
      out.withoutModule = "loaded";
    } catch (e) {
      out.withoutModule = (e instanceof CaskgError ? "CaskgError: " : "") + e.message;
    }
    const engine = await Caskg.load(wasm, artifact);
    out.results = engine.query("heat some egg and put it in the garbage can", { k: 3 }).results.map((r) => r.name);
    engine.close();
    return Response.json(out);
  },
};
