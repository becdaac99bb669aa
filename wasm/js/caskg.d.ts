// Types of caskg.js: caskg's retrieval engine in browsers, workers and Node 20+.

/**
 * Where bytes come from: the bytes themselves, a fetch Response, or a URL (file: in Node). In
 * Node a string that is not an absolute URL is a file path ("./skills.skg").
 */
export type Source =
  | Uint8Array
  | ArrayBuffer
  | ArrayBufferView
  | Response
  | URL
  | string
  | PromiseLike<Uint8Array | ArrayBuffer | ArrayBufferView | Response | URL | string>;

/**
 * Request options: the fields of the request JSON of `caskg query --json` (the engine's Request;
 * wasm/reactor's TestTypings holds this list to it), each optional, 0 or false meaning the
 * default. They reach the engine unchanged, so options it gains work without a new caskg.js;
 * unknown names are errors. The task text is query's own argument.
 */
export interface QueryOptions {
  /** skills to return, in [1, 1000] (default 8) */
  k?: number;
  /** seed skills personalized PageRank starts from, in [1, 100] (default 5) */
  seeds?: number;
  /** PPR restart probability γ in (0, 1] (default 0.2) */
  gamma?: number;
  /** rank by the seeds alone, without the graph */
  no_graph?: boolean;
  /**
   * an embedding of the query by the model that made the artifact's skill vectors, of their
   * dimension; without it, semantic seeding uses the artifact's query encoder
   */
  vector?: Float32Array | number[];
  /** the semantic list's weight in the seed fusion, in (0, 100] (default 0.25) */
  semantic_weight?: number;
  /** no semantic seeding */
  no_semantic?: boolean;
  /** no BM25 or fuzzy-name seeding: seeds from the vectors alone (needs an artifact with vectors) */
  no_lexical?: boolean;
  /** also return `rendered`, the results' text for an agent, cut to the budgets */
  render?: boolean;
  /** characters (code points) of `rendered` per skill, in [1, 1048576] (default 2400) */
  skill_budget?: number;
  /** characters (code points) of `rendered` in all, in [1, 1048576] (default 12000) */
  total_budget?: number;
  /** return only the skills the filter keeps */
  filter?: Filter;
  /** leave the memory of past tasks (the words past runs were asked) out of the ranking */
  no_memory?: boolean;
  /**
   * return only the results whose `match` is at least this, in [0, 1] (default 0); 0.4 drops
   * every weak answer
   */
  min_score?: number;
}

/**
 * Which skills a query may return (the engine's Filter). A skill is kept when its name matches
 * one of `allow` (or it is empty), its namespace is one of `namespaces` (or it is empty), and
 * its name matches none of `deny`. Globs: `*` any run of characters, `?` one character; `[`,
 * `]` and `\` are reserved. A namespace is the part of a name before its first `__`.
 */
export interface Filter {
  /** name globs to keep, at most 1000 of at most 1024 bytes */
  allow?: string[];
  /** name globs never to return; deny wins over allow */
  deny?: string[];
  /** namespaces to keep, exactly (SERVER for tools named SERVER__TOOL) */
  namespaces?: string[];
}

/** A published edge that carried relevance to a result. */
export interface Via {
  /** the neighbour the relevance came from */
  from: string;
  /** the edge's calibration state: "confirmed", "uncertain", "scaffold", … */
  state: string;
  /** the published weight */
  weight: number;
  /** the relation: "dependency", "workflow", "semantic", "alternative" */
  type: string;
  /** the result is a prerequisite of `from`; relevance flowed back along the edge */
  reverse?: boolean;
}

/** The memory of past tasks' evidence for a result: past runs asked in the query's words used it. */
export interface Recall {
  /** past runs whose tasks shared the query's words and used this skill */
  runs: number;
  /** the query's terms (as the index stems them) those runs' tasks shared */
  terms: string[];
}

/** One ranked skill. */
export interface Result {
  name: string;
  /** relative to the best result of the answer, which has 1 */
  score: number;
  /** score times the answer's `match`: comparable across queries of one artifact */
  match: number;
  /** 1-based rank among the seeds; absent for other skills */
  seed_rank?: number;
  /**
   * true when a published edge from a seed raised its score above its own match ("via graph");
   * a skill with neither seed_rank nor graph is a match beyond the seeds
   */
  graph?: boolean;
  /** the published edges (at most 3, one per neighbour and relation) that link it to the other results, strongest first */
  via?: Via[];
  /** set when the memory of past tasks raised the result ("recalled: N past runs") */
  recalled?: Recall;
}

/** The response JSON of `caskg query --json` (the engine's Response). */
export interface QueryResponse {
  results: Result[];
  /**
   * the answer's match strength in [0, 1], comparable across queries of one artifact: the share
   * of the query's weight the words of its first 8 results cover together; below 0.4 no skill
   * matches the query well
   */
  match: number;
  /**
   * for people: set when no term of the query is in the library's index (a query in another
   * language), or else when `match` is below 0.4 ("no skill matches this task well")
   */
  note?: string;
  /** PPR power iterations run */
  iterations?: number;
  /** forward pushes run: the propagation stops once the results linked to others are reached */
  pushes?: number;
  /** forward push: L1 error bound of the propagation it left (1: no push was needed) */
  residual?: number;
  /**
   * with `render`: the bundle text for an agent — a header, then each result's name,
   * description, source, evidence and body head, within skill_budget and total_budget
   */
  rendered?: string;
  /** fields a newer engine adds */
  [field: string]: unknown;
}

/** What info() answers: the module's info JSON about the artifact, and its version JSON. */
export interface Info {
  skills: number;
  edges: number;
  /** terms of the artifact's lexical index */
  terms: number;
  /** the artifact's size */
  bytes: number;
  /** the artifact's format version, "major.minor" */
  format: string;
  /** the build parameters stored in the artifact; null when they are not JSON */
  params: Record<string, unknown> | null;
  /** what the graph has learned from use */
  learning: {
    /** runs (traces, feedback, gateway sessions) the build counted */
    runs: number;
    /** confirmed and uncertain edges */
    live_edges: number;
    /** no runs yet: the graph has learned nothing from use */
    cold: boolean;
    /** a sentence for people: the state and, when cold, how the graph learns */
    note: string;
  };
  module: {
    /** caskg's version */
    version: string;
    /** the artifact format the module writes and reads (any minor of its major) */
    format: string;
    /** the Go release the module was built with */
    go: string;
  };
}

/**
 * Where caskg.wasm is beside caskg.js (in the npm package): what load uses when wasm is null.
 * null in a host whose modules have no URL (workerd): pass the module to load there.
 */
export const moduleURL: URL | null;

/** A refusal from the module (bad artifact, bad request) or a failure of the wrapper. */
export class CaskgError extends Error {}

/** An artifact loaded into its own instance of the module. */
export class Caskg {
  /** Compiles the module once, to pass as `wasm` to several load calls; null: moduleURL's. */
  static compile(wasm?: Source | WebAssembly.Module | null): Promise<WebAssembly.Module>;
  /** Instantiates the module (null: the one at moduleURL) and loads an artifact into it. */
  static load(wasm: Source | WebAssembly.Module | null | undefined, artifact: Source): Promise<Caskg>;
  /** Ranks the artifact's skills for a task. Throws CaskgError on refusal. */
  query(text: string, options?: QueryOptions): QueryResponse;
  /** Answers request JSON text with the module's response JSON text, unparsed. */
  queryJSON(request: string): string;
  info(): Info;
  /** Releases the artifact and the instance; later calls throw. */
  close(): void;
}

export default Caskg;

// WebAssembly's types are in TypeScript's DOM lib, which a Node or workerd project may leave
// out (tsc --lib es2022 --types node). The module is opaque to callers, so an empty interface
// declares it there; with the DOM lib it merges into the DOM's own.
declare global {
  namespace WebAssembly {
    interface Module {}
  }
}
