// Types of caskg.js: caskg's retrieval engine in browsers, workers and Node 20+.

/** Where bytes come from: the bytes themselves, a fetch Response, or a URL (file: in Node). */
export type Source =
  | Uint8Array
  | ArrayBuffer
  | ArrayBufferView
  | Response
  | URL
  | string
  | PromiseLike<Uint8Array | ArrayBuffer | ArrayBufferView | Response | URL | string>;

/**
 * Request options, named as in the request JSON of `caskg query --json`. They reach the engine
 * unchanged, so options it gains work without a new caskg.js; unknown names are errors.
 */
export interface QueryOptions {
  /** skills to return (default 8, at most 1000) */
  k?: number;
  /** seed skills personalized PageRank starts from (default 5) */
  seeds?: number;
  /** PPR restart probability γ in (0, 1] (default 0.2) */
  gamma?: number;
  /** rank by the seeds alone, without the graph */
  no_graph?: boolean;
  /** an embedding of the query by the artifact's vector model, when it has one */
  vector?: Float32Array | number[];
  [option: string]: unknown;
}

/** A published edge that carried relevance to a result. */
export interface Via {
  from: string;
  state: string;
  weight: number;
  type: string;
  /** the result is a prerequisite of `from`; relevance flowed back along the edge */
  reverse?: boolean;
}

export interface Result {
  name: string;
  score: number;
  /** 1-based rank among the seeds; absent when the graph brought the skill in */
  seed_rank?: number;
  via?: Via[];
}

/** The response JSON of `caskg query --json`. */
export interface QueryResponse {
  results: Result[];
  /** PPR power iterations run */
  iterations?: number;
  /** forward pushes run (large graphs) */
  pushes?: number;
  /** forward push: L1 error bound of the scores */
  residual?: number;
  /** the bundle text, when the request asked for it */
  rendered?: string;
  /** fields a newer engine adds */
  [field: string]: unknown;
}

export interface Info {
  skills: number;
  edges: number;
  terms: number;
  bytes: number;
  /** the artifact's format version, "major.minor" */
  format: string;
  /** the build parameters stored in the artifact */
  params: Record<string, unknown> | null;
  module: {
    /** caskg's version */
    version: string;
    /** the newest artifact format the module reads */
    format: string;
    /** the Go release the module was built with */
    go: string;
  };
}

/** A refusal from the module (bad artifact, bad request) or a failure of the wrapper. */
export class CaskgError extends Error {}

/** An artifact loaded into its own instance of the module. */
export class Caskg {
  /** Compiles the module once, to pass as `wasm` to several load calls. */
  static compile(wasm: Source | WebAssembly.Module): Promise<WebAssembly.Module>;
  /** Instantiates the module and loads an artifact into it. */
  static load(wasm: Source | WebAssembly.Module, artifact: Source): Promise<Caskg>;
  /** Ranks the artifact's skills for a task. Throws CaskgError on refusal. */
  query(text: string, options?: QueryOptions): QueryResponse;
  /** Answers request JSON text with the module's response JSON text, unparsed. */
  queryJSON(request: string): string;
  info(): Info;
  /** Releases the artifact and the instance; later calls throw. */
  close(): void;
}

export default Caskg;
