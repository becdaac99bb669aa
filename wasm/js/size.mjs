// size.mjs — prints a module's raw, gzip (level 9) and brotli (quality 11) sizes, as
// `make wasm` reports them.
//
//   node wasm/js/size.mjs bin/caskg.wasm [--json]
import { readFileSync } from "node:fs";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";

const path = process.argv[2];
const b = readFileSync(path);
const gz = gzipSync(b, { level: 9 }).length;
const br = brotliCompressSync(b, {
  params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: b.length },
}).length;
if (process.argv.includes("--json")) {
  console.log(JSON.stringify({ raw: b.length, gzip: gz, brotli: br }));
  process.exit(0);
}
const kb = (n) => `${(n / 1024).toFixed(0)} KiB`;
console.log(`${path}: ${b.length} bytes raw (${kb(b.length)}), ${gz} gzip -9 (${kb(gz)}), ${br} brotli -q 11 (${kb(br)})`);
