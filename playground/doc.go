// Package playground holds caskg's browser playground — index.html, app.js, graph.js and
// style.css, a static page over the WebAssembly module (bin/caskg.wasm) and its ES module
// (wasm/js/caskg.js) — and its end-to-end test, which serves the page with native/serve and
// drives it in headless Chromium through the DevTools protocol. `caskg serve` serves the page;
// there is no Go code to import here.
package playground
