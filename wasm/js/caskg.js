// caskg.js — caskg's retrieval engine in browsers, workers and Node (20 or newer).
//
//   import { Caskg } from "caskg"; // the npm package (make npm), or "./caskg.js"
//   const engine = await Caskg.load(null, artifactBytes); // null: the package's caskg.wasm
//   const { results } = engine.query("heat some egg", { k: 6 });
//   engine.close();
//
// The module is the WASI reactor built by `make wasm` (wasm/reactor). This file supplies the few
// WASI calls the Go runtime makes — clocks, randomness, standard output and error to the
// console — and nothing else: no file system, no network. It uses only what every host has
// (WebAssembly, TextEncoder/TextDecoder, crypto.getRandomValues, performance.now, fetch).

const WASI = "wasi_snapshot_preview1";
const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

/** An error reported by the module (a bad artifact or request) or by this wrapper. */
export class CaskgError extends Error {
  constructor(message) {
    super(message);
    this.name = "CaskgError";
  }
}

/** Thrown by proc_exit to unwind out of the module; the instance is unusable afterwards. */
class WasiExit extends Error {
  constructor(code) {
    super(`caskg: module exited with code ${code}`);
    this.code = code;
  }
}

/**
 * The module shipped beside this file (caskg.wasm in the npm package), which load and compile use
 * when given no module. Resolved against this file's own URL, not the working directory or the
 * page, so it is found wherever the package is installed; bundlers recognise the pattern and
 * emit the file as an asset. null in a host whose modules have no URL (workerd, where
 * import.meta.url is undefined): there the caller passes the module to load or compile (a
 * WebAssembly.Module, as `import wasm from "./caskg.wasm"` gives one there), and importing
 * this file must not throw.
 */
export const moduleURL = moduleURLOf();

function moduleURLOf() {
  try {
    return new URL("./caskg.wasm", import.meta.url);
  } catch {
    return null;
  }
}

/** Whether this is Node (or a runtime that reads files as it does), where a string may be a path. */
const isNode = typeof process !== "undefined" && typeof process.versions?.node === "string";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/**
 * Resolves bytes from a Uint8Array, an ArrayBuffer (or view), a Response, a URL or a URL string.
 * file: URLs are read with node:fs, for Node; other URLs are fetched. In Node a string that is
 * not an absolute URL is a file path, relative to the working directory ("./skills.skg"); in a
 * page, a URL relative to the page.
 */
async function bytesOf(src, what) {
  src = await src;
  if (src instanceof Uint8Array) return src;
  if (src instanceof ArrayBuffer) return new Uint8Array(src);
  if (ArrayBuffer.isView(src)) return new Uint8Array(src.buffer, src.byteOffset, src.byteLength);
  if (typeof Response !== "undefined" && src instanceof Response) {
    if (!src.ok) throw new CaskgError(`caskg: ${what}: HTTP ${src.status} for ${src.url}`);
    return new Uint8Array(await src.arrayBuffer());
  }
  if (typeof src === "string" || src instanceof URL) {
    const url = await urlOf(src, what);
    if (url.protocol === "file:") {
      const { readFile } = await import("node:fs/promises");
      return new Uint8Array(await readFile(url));
    }
    return bytesOf(await fetch(url), what);
  }
  throw new CaskgError(`caskg: ${what}: want bytes, an ArrayBuffer, a Response or a URL`);
}

/** The URL src names: absolute, relative to the page, or in Node a file path. */
async function urlOf(src, what) {
  if (src instanceof URL) return src;
  const base = globalThis.location?.href;
  // A Windows path ("C:\\x.skg") would parse as a URL of scheme c:, so in Node a string is a path
  // unless it starts as a URL does.
  if (isNode && !/^([a-z][a-z0-9+.-]+:\/\/|file:|data:|blob:)/i.test(src)) {
    const { pathToFileURL } = await import("node:url");
    return pathToFileURL(src);
  }
  try {
    return new URL(src, base);
  } catch {
    throw new CaskgError(`caskg: ${what}: ${JSON.stringify(src)} is not a URL, and this host has no page to ` +
      "resolve it against; pass an absolute URL, a Response or the bytes");
  }
}

/**
 * Compiles the module from any source bytesOf accepts, or returns a compiled one as is; null or
 * undefined compiles the one at moduleURL.
 */
async function compile(wasm) {
  wasm = (await wasm) ?? moduleURL;
  if (wasm instanceof WebAssembly.Module) return wasm;
  if (wasm === null) {
    throw new CaskgError("caskg: module: this host gives modules no URL (import.meta.url), so caskg.wasm " +
      "cannot be found beside caskg.js; pass the module to load or compile: a WebAssembly.Module " +
      "(in workerd, import wasm from \"./caskg.wasm\"), its bytes or its URL");
  }
  if (typeof Response !== "undefined" && wasm instanceof Response && WebAssembly.compileStreaming) {
    try {
      return await WebAssembly.compileStreaming(wasm.clone());
    } catch {
      // Served without Content-Type: application/wasm; compile from the bytes instead.
    }
  }
  return WebAssembly.compile(await bytesOf(wasm, "module"));
}

/** The WASI imports of one instance. memory() returns the instance's memory once it exists. */
function wasiImports(module, memory, out) {
  const view = () => new DataView(memory().buffer);
  const bytes = () => new Uint8Array(memory().buffer);
  const lines = { 1: "", 2: "" };
  const fns = {
    args_sizes_get(argc, bufSize) {
      view().setUint32(argc, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    args_get: () => ESUCCESS,
    environ_sizes_get(count, bufSize) {
      view().setUint32(count, 0, true);
      view().setUint32(bufSize, 0, true);
      return ESUCCESS;
    },
    environ_get: () => ESUCCESS,
    clock_res_get(id, res) {
      view().setBigUint64(res, 1000n, true);
      return ESUCCESS;
    },
    clock_time_get(id, precision, time) {
      let ns;
      if (id === 0) ns = BigInt(Date.now()) * 1000000n; // realtime
      else if (id === 1) ns = BigInt(Math.round(performance.now() * 1e6)); // monotonic
      else return EINVAL;
      view().setBigUint64(time, ns, true);
      return ESUCCESS;
    },
    random_get(ptr, len) {
      // getRandomValues fills at most 65536 bytes a call.
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(new Uint8Array(memory().buffer, ptr + off, Math.min(65536, len - off)));
      }
      return ESUCCESS;
    },
    fd_write(fd, iovs, iovsLen, nwritten) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const v = view();
      let n = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = v.getUint32(iovs + 8 * i, true);
        const len = v.getUint32(iovs + 8 * i + 4, true);
        lines[fd] += decoder.decode(bytes().subarray(ptr, ptr + len), { stream: true });
        n += len;
      }
      // Whole lines go to the console. The start of fd 2 is kept for error messages: it is
      // where the Go runtime says why it gave up.
      const parts = lines[fd].split("\n");
      lines[fd] = parts.pop();
      for (const line of parts) {
        if (fd === 2) {
          if (out.stderr.length < 4096) out.stderr += line + "\n";
          console.error(line);
        } else {
          console.log(line);
        }
      }
      view().setUint32(nwritten, n, true);
      return ESUCCESS;
    },
    fd_fdstat_get(fd, stat) {
      if (fd > 2) return EBADF;
      const v = view();
      v.setUint8(stat, 2); // character device
      v.setUint16(stat + 2, 0, true);
      v.setBigUint64(stat + 8, 0xffffffffffffffffn, true);
      v.setBigUint64(stat + 16, 0xffffffffffffffffn, true);
      return ESUCCESS;
    },
    fd_fdstat_set_flags: (fd) => (fd > 2 ? EBADF : ESUCCESS),
    fd_prestat_get: () => EBADF, // no preopened directories: the module sees no file system
    fd_prestat_dir_name: () => EBADF,
    fd_read(fd, iovs, iovsLen, nread) {
      if (fd !== 0) return EBADF;
      view().setUint32(nread, 0, true); // standard input is empty
      return ESUCCESS;
    },
    fd_close: (fd) => (fd > 2 ? EBADF : ESUCCESS),
    poll_oneoff(subs, events, n, nevents) {
      // Nothing can block here: report every subscription as ready at once.
      const v = view();
      for (let i = 0; i < n; i++) {
        const s = subs + 48 * i;
        const e = events + 32 * i;
        v.setBigUint64(e, v.getBigUint64(s, true), true); // userdata
        v.setUint16(e + 8, 0, true); // error
        v.setUint8(e + 10, v.getUint8(s + 8)); // type
        for (let k = 11; k < 32; k++) v.setUint8(e + k, 0);
      }
      v.setUint32(nevents, n, true);
      return ESUCCESS;
    },
    sched_yield: () => ESUCCESS,
    proc_exit(code) {
      throw new WasiExit(code);
    },
  };
  // Anything else the module imports from WASI answers "not supported".
  const wasi = {};
  for (const imp of WebAssembly.Module.imports(module)) {
    if (imp.module !== WASI || imp.kind !== "function") continue;
    wasi[imp.name] = fns[imp.name] ?? (() => ENOSYS);
  }
  return { [WASI]: wasi };
}

/** One instance of the module: the ABI of wasm/reactor, with JSON in and out. */
class Instance {
  constructor(exports, out) {
    this.x = exports;
    this.out = out;
    this.dead = null;
    this.req = 0; // a module buffer kept for requests (send), and its size
    this.reqCap = 0;
    this.keys = []; // takeTape's caches
    this.strings = new Map();
  }

  /** Calls an export; a trap or exit kills the instance and becomes a CaskgError. */
  call(name, ...args) {
    if (this.dead) throw this.dead;
    try {
      return this.x[name](...args);
    } catch (err) {
      let msg = err instanceof WasiExit ? err.message : `caskg: module trapped in ${name}: ${err.message}`;
      const first = this.out.stderr.split("\n")[0];
      if (first) msg += ` (module stderr: ${first})`;
      this.dead = new CaskgError(msg);
      throw this.dead;
    }
  }

  /** Copies bytes into a fresh module buffer and returns its address. */
  put(data) {
    const ptr = this.call("alloc", data.length) >>> 0;
    if (ptr === 0) throw new CaskgError(`caskg: cannot allocate ${data.length} bytes in the module`);
    // memory.buffer is replaced whenever memory grows: take it after alloc.
    new Uint8Array(this.x.memory.buffer, ptr, data.length).set(data);
    return ptr;
  }

  /**
   * Writes text as UTF-8 into the buffer kept for requests, growing it when text does not fit, and
   * returns its length: the module reads a request and keeps nothing of it, so one buffer serves
   * every request without an alloc and a free each.
   */
  send(text) {
    for (;;) {
      if (this.reqCap > 0) {
        const { read, written } = encoder.encodeInto(text, new Uint8Array(this.x.memory.buffer, this.req, this.reqCap));
        if (read === text.length) return written;
        this.call("free", this.req);
        this.reqCap = 0;
      }
      const size = Math.max(4096, 3 * text.length); // UTF-8 takes at most 3 bytes a UTF-16 unit
      const ptr = this.call("alloc", size) >>> 0;
      if (ptr === 0) throw new CaskgError(`caskg: cannot allocate ${size} bytes in the module`);
      this.req = ptr;
      this.reqCap = size;
    }
  }

  /** Reads and frees a packed (ptr << 32 | len) result, returning its text. */
  take(packed) {
    const ptr = Number(packed >> 32n);
    const len = Number(packed & 0xffffffffn);
    const text = decoder.decode(new Uint8Array(this.x.memory.buffer, ptr, len));
    this.call("free", ptr);
    return text;
  }

  /**
   * Reads and frees a packed result of the tape export: the response's value, as answer would
   * give it for the JSON of query. The tape (wasm/internal/wire/tape.go) carries numbers as
   * their bits and strings as their bytes, so nothing formats a float in the module or parses
   * one here, which were a fifth of a short query's time. An error is JSON, as from query: its
   * second byte is a quote where a tape's is a key.
   */
  takeTape(packed) {
    const ptr = Number(packed >> 32n);
    const len = Number(packed & 0xffffffffn);
    const bytes = new Uint8Array(this.x.memory.buffer, ptr, len);
    let v, text;
    try {
      if (len > 1 && bytes[1] === 0x22) text = decoder.decode(bytes);
      else v = readTape(bytes, this.keys, this.strings);
    } finally {
      this.call("free", ptr);
    }
    return text === undefined ? v : answer(text);
  }
}

const strict = new TextDecoder("utf-8", { fatal: true });

/**
 * Decodes UTF-8 as Go reads it, and so as the module's JSON carries it: each byte that starts no
 * valid sequence (utf8.DecodeRune) is one U+FFFD, where TextDecoder's replacement takes a
 * truncated sequence whole.
 */
function utf8(b) {
  try {
    return strict.decode(b);
  } catch {
    let s = "";
    for (let i = 0; i < b.length; ) {
      const c = b[i];
      const n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
      // The second byte's range, narrower after E0, ED, F0 and F4 (no overlong forms, surrogates
      // or code points past U+10FFFF); the others' 80-BF.
      const lo = c === 0xe0 ? 0xa0 : c === 0xf0 ? 0x90 : 0x80;
      const hi = c === 0xed ? 0x9f : c === 0xf4 ? 0x8f : 0xbf;
      let ok = n > 0 && i + n <= b.length && (n === 1 || (b[i + 1] >= lo && b[i + 1] <= hi));
      for (let j = 2; ok && j < n; j++) ok = b[i + j] >= 0x80 && b[i + j] <= 0xbf;
      if (ok) {
        s += decoder.decode(b.subarray(i, i + n));
        i += n;
      } else {
        s += "\ufffd";
        i++;
      }
    }
    return s;
  }
}

/**
 * The value of the tape in bytes (wasm/internal/wire/tape.go): objects, arrays, numbers,
 * strings, booleans and null built in the order JSON.parse builds them from the JSON. keys
 * caches the member names by their ids; strings, the short ASCII strings by a hash of their
 * bytes (the skill names of every answer), checked byte for byte before one is reused.
 */
function readTape(b, keys, strings) {
  const dv = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let i = 0;
  const str = (at, n) => {
    if (n > 64) return utf8(b.subarray(at, at + n));
    let h = n;
    for (let j = at; j < at + n; j++) h = Math.imul(h ^ b[j], 0x9e3779b1);
    let s = strings.get(h);
    if (s !== undefined && s.length === n) {
      let j = 0;
      while (j < n && s.charCodeAt(j) === b[at + j]) j++;
      if (j === n) return s;
    }
    s = utf8(b.subarray(at, at + n));
    if (s.length === n) { // ASCII: one byte a character, as the check above compares them
      if (strings.size >= 4096) strings.clear();
      strings.set(h, s);
    }
    return s;
  };
  const value = () => {
    const tok = b[i++];
    switch (tok) {
      case 0x7b: { // {
        const o = {};
        while (b[i] === 0x6b) { // k: id, length, name
          const id = b[i + 1], n = b[i + 2];
          const k = keys[id] ?? (keys[id] = decoder.decode(b.subarray(i + 3, i + 3 + n)));
          i += 3 + n;
          o[k] = value();
        }
        if (b[i++] !== 0x7d) break;
        return o;
      }
      case 0x5b: { // [
        const a = [];
        while (i < b.length && b[i] !== 0x5d) a.push(value());
        i++;
        return a;
      }
      case 0x64: { // d: a float64
        const x = dv.getFloat64(i, true);
        i += 8;
        return x;
      }
      case 0x69: { // i: an int64, rounded once to a float64 as JSON.parse rounds its digits
        const x = dv.getInt32(i + 4, true) * 4294967296 + dv.getUint32(i, true);
        i += 8;
        return x;
      }
      case 0x73: // s: a string
      case 0x78: { // x: JSON text
        const n = dv.getUint32(i, true);
        const s = str(i + 4, n);
        i += 4 + n;
        return tok === 0x73 ? s : JSON.parse(s);
      }
      case 0x74:
        return true;
      case 0x66:
        return false;
      case 0x6e:
        return null;
    }
    throw new CaskgError(`caskg: bad response tape at byte ${i - 1}`);
  };
  const v = value();
  if (i !== b.length) throw new CaskgError(`caskg: bad response tape at byte ${i}`);
  return v;
}

/** Parses a module answer, throwing its {"error"} as a CaskgError. */
function answer(text) {
  const v = JSON.parse(text);
  if (v && typeof v.error === "string") throw new CaskgError(v.error);
  return v;
}

/** The request fields query refuses at 0, and their largest values. */
const positive = [["k", 1000], ["seeds", 100]];

/** An artifact loaded into its own instance of the module. Not for concurrent use across workers. */
export class Caskg {
  /** Compiles the module once, for several load calls: pass the result as their wasm. */
  static compile(wasm) {
    return compile(wasm);
  }

  /**
   * Instantiates the module and loads an artifact into it.
   * @param wasm the module: bytes, ArrayBuffer, Response, URL, or a compiled WebAssembly.Module;
   *   null or undefined for the one beside this file (moduleURL)
   * @param artifact the .skg artifact: bytes, ArrayBuffer, Response or URL
   */
  static async load(wasm, artifact) {
    const [module, data] = await Promise.all([compile(wasm), bytesOf(artifact, "artifact")]);
    const out = { stderr: "" };
    let memory = null;
    const instance = await WebAssembly.instantiate(module, wasiImports(module, () => memory, out));
    memory = instance.exports.memory;
    const inst = new Instance(instance.exports, out);
    inst.call("_initialize");
    const version = answer(inst.take(inst.call("version")));
    const res = inst.call("load", inst.put(data), data.length); // load keeps the buffer
    if (res >> 32n !== 0n) answer(inst.take(res));
    const handle = Number(res);
    return new Caskg(inst, handle, version);
  }

  constructor(inst, handle, version) {
    this.inst = inst;
    this.handle = handle;
    this.version = version;
  }

  /**
   * Ranks the artifact's skills for a task. options are the request fields of `caskg query
   * --json` as they are named there (k, seeds, gamma, no_graph, vector, …) and pass through
   * unchanged; a Float32Array vector is sent as an array.
   */
  query(text, options = {}) {
    // The module reads a k or seeds of 0 as the default, as a field left out: given here, it is
    // the caller's mistake, refused as every other surface refuses it (engine.Limits.Check).
    for (const [field, max] of positive) {
      if (options[field] === 0) throw new CaskgError(`engine: field "${field}": 0 is outside [1, ${max}]`);
    }
    let request;
    if (options.constructor === Object && options.vector === undefined && !("query" in options)) {
      // A plain object's members then the query, as JSON.stringify writes { ...options, query }
      // but without the copy, which was a thirtieth of a short query.
      const o = JSON.stringify(options);
      request = (o.length > 2 ? o.slice(0, -1) + "," : "{") + '"query":' + JSON.stringify(text) + "}";
    } else {
      const req = { ...options, query: text };
      if (ArrayBuffer.isView(req.vector)) req.vector = Array.from(req.vector);
      request = JSON.stringify(req);
    }
    if (!this.inst?.x.tape) return answer(this.queryJSON(request)); // a module before tape
    const n = this.inst.send(request);
    return this.inst.takeTape(this.inst.call("tape", this.handle, this.inst.req, n));
  }

  /** Answers a request given as JSON text with the module's response JSON text, unparsed. */
  queryJSON(request) {
    this.check();
    const n = this.inst.send(request);
    return this.inst.take(this.inst.call("query", this.handle, this.inst.req, n));
  }

  /** Counts, format version and build parameters of the artifact, and the module's version. */
  info() {
    this.check();
    return { ...answer(this.inst.take(this.inst.call("info", this.handle))), module: this.version };
  }

  /** Releases the artifact and the instance. */
  close() {
    if (this.inst && !this.inst.dead) this.inst.call("unload", this.handle);
    this.inst = null;
  }

  check() {
    if (!this.inst) throw new CaskgError("caskg: engine is closed");
  }
}

export default Caskg;
