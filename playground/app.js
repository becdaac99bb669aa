// app.js — the caskg playground: the engine as WebAssembly (caskg.js over caskg.wasm) on an
// artifact, a query box answered as you type, the bundle with and without the graph, the graph
// around the bundle, and the rendered bundle text.
//
// Skill names and text come from the artifact, which may be anyone's: they reach the page only
// through textContent and attributes, never as HTML.

import { Caskg } from "./caskg.js";
import { drawGraph } from "./graph.js";

const $ = (id) => document.getElementById(id);

// Skills just outside the bundle that the graph view shows for context.
const NEAR = 4;
// At most this many sources of evidence outside the drawn skills join the graph view.
const SOURCES = 6;
// The knobs' allowed ranges, as the inputs declare them; a value outside is refused, not clamped.
const LIMITS = { k: [1, 50], seeds: [1, 20] };
// Budgets of the renders read for skill text: large enough that nothing is cut.
const WHOLE = { skill_budget: 1 << 18, total_budget: 1 << 20 };
const DEBOUNCE_MS = 150;

const state = {
  module: null, // Promise<WebAssembly.Module>
  engine: null,
  label: "",
  tasks: [], // sample tasks of the served artifact: {id, query, gold}
  servedArtifact: true, // the loaded artifact is the one the tasks belong to
  texts: new Map(), // skill name → its parsed section of a render
  firstResult: false,
  runs: 0,
  drawn: null, // the graph view's {nodes, edges}, redrawn when the width changes
};

// ---- loading ---------------------------------------------------------------------------------

async function init() {
  const params = new URLSearchParams(location.search);
  // Marks for the load timeline (performance.getEntriesByType("mark")).
  state.module = Caskg.compile(fetch("caskg.wasm")).then((m) => (performance.mark("caskg:compiled"), m));
  const artifactURL = params.get("artifact");
  const tasks = artifactURL ? Promise.resolve([]) : fetchTasks();
  wireControls();
  // The graph's boxes follow the room the page gives it: redraw it when the width changes.
  let width = window.innerWidth;
  window.addEventListener("resize", () => {
    if (window.innerWidth === width) return;
    width = window.innerWidth;
    requestAnimationFrame(draw);
  });
  const resp = fetch(artifactURL || "artifact.skg");
  // The server names the served file in Content-Disposition; a URL names itself.
  const label = artifactURL ? fileName(artifactURL) : await resp.then((r) => servedName(r), () => "artifact.skg");
  await loadArtifact(resp, label, !artifactURL);
  state.tasks = await tasks;
  showTasks();
  const q = params.get("q") ?? state.tasks[0]?.query ?? "";
  if (q && !$("q").value) {
    $("q").value = q;
    syncTaskSelect();
  }
  run();
}

async function fetchTasks() {
  try {
    const resp = await fetch("tasks.json");
    if (!resp.ok) return [];
    const tasks = await resp.json();
    return Array.isArray(tasks) ? tasks.filter((t) => typeof t?.query === "string") : [];
  } catch {
    return []; // a static copy of the page without tasks
  }
}

function servedName(resp) {
  const m = /filename="?([^";]+)"?/.exec(resp.headers.get("Content-Disposition") ?? "");
  return m ? m[1] : "artifact.skg";
}

function fileName(url) {
  try {
    return decodeURIComponent(new URL(url, location.href).pathname.split("/").pop()) || url;
  } catch {
    return url;
  }
}

/** Loads an artifact from anything caskg.js accepts and makes it the current one. */
async function loadArtifact(source, label, served) {
  setStatus(`Loading ${label}…`);
  // The answer on screen belongs to the artifact being replaced: gone until the new one answers.
  clearResults();
  let engine;
  try {
    engine = await Caskg.load(await state.module, source);
  } catch (err) {
    showError(`Could not load ${label}: ${err.message}`);
    setStatus("");
    // The line above the loaders must not keep promising an engine that will not come.
    if (!state.engine) $("stats").textContent = "No skill graph loaded: open a .skg file or load one from a URL.";
    markAnswer("", "error");
    return false;
  }
  performance.mark("caskg:loaded");
  state.engine?.close();
  state.engine = engine;
  state.label = label;
  state.servedArtifact = served;
  hideError();
  showStats(engine.info());
  showTasks();
  run();
  return true;
}

async function loadFile(file) {
  if (!file) return;
  const bytes = new Uint8Array(await file.arrayBuffer());
  await loadArtifact(bytes, file.name, false);
}

function showStats(info) {
  const stats = $("stats");
  stats.replaceChildren();
  const name = document.createElement("b");
  name.textContent = state.label;
  stats.append("Skill graph: ", name);
  const facts = [
    plural(info.skills, "skill"),
    plural(info.edges, "published edge"),
    plural(info.terms, "index term"),
    `${fmtBytes(info.bytes)}`,
    `format ${info.format}`,
  ];
  const p = info.params ?? {};
  if (typeof p.variant === "string") facts.push(`build ${p.variant}`);
  if (typeof p.prober === "string") facts.push(`${p.prober} prober`);
  for (const f of facts) {
    const s = document.createElement("span");
    s.className = "fact";
    s.textContent = f;
    stats.append(s);
  }
  stats.dataset.skills = info.skills;
  stats.dataset.edges = info.edges;
  // What the graph has learned from use, in the engine's words (the same note inspect, the
  // health route and graph_info give); a cold graph's note says how it learns.
  const learning = $("learning");
  const l = info.learning;
  learning.hidden = !l;
  learning.replaceChildren();
  // The engine's note is written for every surface, with commands in backticks: here they are
  // code, and a cold graph's how-to folds under its first sentence so a phone keeps its screen.
  const note = l?.note ?? "";
  const cut = note.indexOf(": ");
  if (l?.cold && cut > 0) {
    withCode(learning, note.slice(0, cut) + ".");
    const more = el("details", "how");
    more.append(el("summary", "", "Why, and how it learns"), " ");
    withCode(more, note[cut + 2].toUpperCase() + note.slice(cut + 3));
    learning.append(" ", more);
  } else {
    withCode(learning, note);
  }
  learning.classList.toggle("cold", Boolean(l?.cold));
  learning.dataset.cold = l?.cold ? "true" : "false";
  learning.dataset.runs = String(l?.runs ?? 0);
  const dl = $("params-list");
  dl.replaceChildren();
  for (const [k, v] of Object.entries(p)) {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = typeof v === "object" ? JSON.stringify(v) : String(v);
    dl.append(dt, dd);
  }
  $("version").textContent = `${info.module.version} (engine module for artifact format ${info.module.format}, ${info.module.go})`;
}

function showTasks() {
  const sel = $("tasks");
  const show = state.servedArtifact && state.tasks.length > 0;
  sel.hidden = !show;
  if (!show || sel.options.length > 1) return;
  for (const t of state.tasks) {
    const o = document.createElement("option");
    o.value = t.query;
    o.textContent = `${t.id}: ${t.query}`;
    sel.append(o);
  }
}

// ---- controls --------------------------------------------------------------------------------

function wireControls() {
  let timer = 0;
  $("q").addEventListener("input", () => {
    clearTimeout(timer);
    // Until the new answer, the lists answer other text: dim them.
    document.body.classList.add("pending");
    timer = setTimeout(() => {
      syncTaskSelect();
      run();
    }, DEBOUNCE_MS);
  });
  $("tasks").addEventListener("change", () => {
    if (!$("tasks").value) return;
    $("q").value = $("tasks").value;
    run();
  });
  for (const id of ["k", "seeds", "gamma", "use-graph", "min-score"]) $(id).addEventListener("input", run);
  $("gamma").addEventListener("input", () => ($("gamma-out").textContent = Number($("gamma").value).toFixed(2)));
  $("file").addEventListener("change", () => loadFile($("file").files[0]));
  $("url-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const url = $("url").value.trim();
    if (url) loadArtifact(fetch(url), fileName(url), false);
  });
  document.addEventListener("dragover", (ev) => {
    ev.preventDefault();
    document.body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (ev) => {
    if (ev.target === document.documentElement || ev.target === document.body) document.body.classList.remove("dropping");
  });
  document.addEventListener("drop", (ev) => {
    ev.preventDefault();
    document.body.classList.remove("dropping");
    loadFile(ev.dataTransfer?.files?.[0]);
  });
  $("copy").addEventListener("click", copyBundle);
}

function syncTaskSelect() {
  const sel = $("tasks");
  const q = $("q").value.trim();
  sel.value = [...sel.options].some((o) => o.value === q) ? q : "";
}

/**
 * The knobs, and problems: a whole-number knob outside its range is named with the range
 * rather than clamped, so the answer on screen is always for the numbers the inputs show.
 */
function knobs() {
  const problems = [];
  const whole = (id, label) => {
    const [lo, hi] = LIMITS[id];
    const input = $(id);
    const v = Number(input.value);
    const ok = input.value.trim() !== "" && Number.isInteger(v) && v >= lo && v <= hi;
    input.setAttribute("aria-invalid", ok ? "false" : "true");
    if (!ok) problems.push(`${label} must be a whole number from ${lo} to ${hi}; it is ${input.value.trim() === "" ? "empty" : `“${input.value}”`}.`);
    return v;
  };
  const gamma = Number($("gamma").value);
  const min = $("min-score");
  const minScore = Number(min.value);
  const minOK = min.value.trim() !== "" && minScore >= 0 && minScore <= 1;
  min.setAttribute("aria-invalid", minOK ? "false" : "true");
  if (!minOK) problems.push(`Min match must be a number from 0 to 1; it is ${min.value.trim() === "" ? "empty" : `“${min.value}”`}.`);
  return {
    minScore,
    k: whole("k", "Skills k"),
    seeds: whole("seeds", "Seeds"),
    gamma: Number.isFinite(gamma) ? Math.min(0.95, Math.max(0.05, gamma)) : 0.2, // a slider cannot leave its range
    graph: $("use-graph").checked,
    problems,
  };
}

// ---- answering -------------------------------------------------------------------------------

function run() {
  const engine = state.engine;
  if (!engine) return;
  const text = $("q").value.trim();
  const { k, seeds, gamma, graph, minScore, problems } = knobs();
  document.body.classList.toggle("no-graph", !graph);
  document.body.classList.remove("pending");
  // Nothing of the last answer stays while this one runs or if it fails; the skill being read
  // stays open if the new answer holds it.
  const reading = $("skill").dataset.name;
  clearResults();
  if (problems.length) {
    showError(problems.join("\n"));
    setStatus("");
    markAnswer(text, "invalid");
    return;
  }
  if (!text) {
    hideError();
    showNote("");
    setStatus("Type a task to see its skills.");
    return;
  }
  const base = { k, seeds, gamma, no_graph: !graph, min_score: minScore };
  let main, plain, wide;
  const t0 = performance.now();
  try {
    main = engine.query(text, { ...base, render: true });
    plain = engine.query(text, { ...base, no_graph: true, render: true, ...WHOLE });
    wide = engine.query(text, { ...base, k: k + NEAR, render: true, ...WHOLE });
  } catch (err) {
    showError(err.message);
    showNote("");
    setStatus("");
    markAnswer(text, "error");
    return;
  }
  const ms = performance.now() - t0;
  hideError();
  showNote(main.note);

  state.texts = new Map([...sections(plain.rendered, plain.results), ...sections(wide.rendered, wide.results)]);
  const gold = goldFor(text);
  const inMain = new Set(main.results.map((r) => r.name));
  const inPlain = new Set(plain.results.map((r) => r.name));

  $("main-title").firstChild.textContent = graph ? "With the graph " : "Graph off: seeds only ";
  $("main-title").lastChild.textContent = graph ? "(CaSKG)" : "(tick “use the graph” to compare)";
  $("graph-off").hidden = graph;
  showList($("results"), main.results, { other: inPlain, otherTag: "added by graph", gold });
  showList($("plain"), plain.results, { other: inMain, otherTag: "left out with graph", gold });
  showGold($("main-gold"), main.results, gold);
  showGold($("plain-gold"), plain.results, gold);
  showGraph(main.results, wide.results, k);
  showBundle(main.rendered);
  if (reading && inMain.has(reading)) showSkill(reading);
  else if (main.results.length) showSkill(main.results[0].name);

  const results = $("results");
  results.dataset.k = k;
  results.dataset.graph = graph ? "on" : "off";
  results.dataset.match = String(main.match);
  markAnswer(text, "ok");
  setStatus(`${plural(main.results.length, "skill")}, match ${main.match.toFixed(2)}, in ${ms.toFixed(1)} ms (3 queries, WebAssembly in this tab)`);
  if (!state.firstResult && main.results.length > 0) {
    // Navigation start to the first ranked bundle on screen: the number the README reports.
    state.firstResult = true;
    performance.mark("caskg:answered");
    requestAnimationFrame(() => (document.body.dataset.firstResultMs = performance.now().toFixed(1)));
  }
}

function clearResults() {
  for (const id of ["results", "plain", "main-gold", "plain-gold", "graph", "bundle", "bundle-size"]) $(id).replaceChildren();
  state.drawn = null;
  $("graph-scroll").hidden = true;
  $("results").dataset.query = "";
  $("results").dataset.outcome = "";
  const panel = $("skill");
  delete panel.dataset.name;
  panel.replaceChildren(el("p", "note", "Click a skill in the graph or a list to read it here."));
}

/** Records on #results that a run for text ended ("ok", "invalid" or "error"), for tests and tools. */
function markAnswer(text, outcome) {
  state.runs++;
  const d = $("results").dataset;
  d.query = text;
  d.outcome = outcome;
  d.run = state.runs;
}

/** The gold skills of the sample task whose text is the query, when the served artifact is loaded. */
function goldFor(text) {
  if (!state.servedArtifact) return null;
  const t = state.tasks.find((t) => t.query.trim() === text);
  return t && Array.isArray(t.gold) && t.gold.length ? new Set(t.gold) : null;
}

/**
 * Splits a render made with budgets that cut nothing into one entry per result: its heading,
 * description, source, evidence lines and body head. Each section starts with the line
 * "[i] name (why)" after a blank line, in result order.
 */
function sections(rendered, results) {
  const out = new Map();
  if (typeof rendered !== "string") return out;
  const starts = [];
  let pos = 0;
  for (let i = 0; i < results.length; i++) {
    const head = `\n\n[${i + 1}] ${oneLine(results[i].name)} (`;
    const at = rendered.indexOf(head, pos);
    if (at < 0) break;
    starts.push(at + 2);
    pos = at + head.length;
  }
  starts.forEach((start, i) => {
    const text = rendered.slice(start, i + 1 < starts.length ? starts[i + 1] - 2 : rendered.length).replace(/\n+$/, "");
    const blank = text.indexOf("\n\n");
    const lines = (blank < 0 ? text : text.slice(0, blank)).split("\n");
    const entry = { description: lines[1] ?? "", source: "", evidence: [], body: blank < 0 ? "" : text.slice(blank + 2) };
    for (const line of lines.slice(2)) {
      if (line.startsWith("source: ")) entry.source = line.slice(8);
      else if (line.startsWith("- ")) entry.evidence.push(line.slice(2));
    }
    out.set(results[i].name, entry);
  });
  return out;
}

/** The engine's oneLine for names: white space and control characters collapsed to one space. */
function oneLine(s) {
  return s.replace(/[\s\p{Cc}]+/gu, " ").trim();
}

/** How the result stands to v.from, in the engine's words (wasm/engine render.go). */
function relation(v) {
  switch (v.type) {
    case "dependency":
      return v.reverse ? "needed by" : "needs";
    case "semantic":
      return "similar to";
    case "alternative":
      return "alternative to";
  }
  return v.reverse ? "before" : "after";
}

/**
 * What put r in the answer, as the engine says it: a seed; via graph when an edge from a seed
 * raised its score (r.graph); recalled when the memory of past tasks raised it (r.recalled); else
 * a match beyond the seeds that neither raised.
 */
function evidence(r) {
  if (r.seed_rank) return { kind: "seed", label: `seed #${r.seed_rank}` };
  if (r.graph) return { kind: "via", label: "via graph" };
  if (r.recalled) return { kind: "plain", label: "recalled" };
  return { kind: "plain", label: "match" };
}

/**
 * The memory of past tasks' evidence for r (r.recalled), in the engine's words (Recall.Evidence,
 * wasm/engine memory.go): "recalled: 14 past runs (stock, new)"; "" when the memory did not
 * raise r.
 */
function recalledText(r) {
  const rc = r.recalled;
  if (!rc) return "";
  const terms = rc.terms?.length ? ` (${rc.terms.join(", ")})` : "";
  return `recalled: ${rc.runs} past run${rc.runs === 1 ? "" : "s"}${terms}`;
}

function el(tag, className, text) {
  const e = document.createElement(tag);
  if (className) e.className = className;
  if (text !== undefined) e.textContent = text;
  return e;
}

function showList(list, results, { other, otherTag, gold }) {
  list.replaceChildren();
  const top = results[0]?.score || 1;
  results.forEach((r) => {
    const li = el("li", "result");
    li.dataset.name = r.name;
    li.dataset.score = String(r.score);
    li.dataset.seedRank = String(r.seed_rank ?? 0);
    const head = el("div", "head");
    const name = el("button", "name", r.name);
    name.type = "button";
    name.title = "Show this skill";
    name.addEventListener("click", () => showSkill(r.name));
    head.append(name);
    const ev = evidence(r);
    li.dataset.evidence = ev.label;
    head.append(el("span", `tag ${ev.kind}`, ev.label));
    if (!other.has(r.name)) head.append(el("span", `tag ${otherTag.startsWith("added") ? "added" : "dropped"}`, otherTag));
    if (gold?.has(r.name)) head.append(el("span", "tag gold", "✓ needed"));
    const score = el("span", "score", r.score.toFixed(4));
    score.title = `score ${r.score} (relative to the best); match ${r.match} (score × the answer's match strength, comparable across tasks)`;
    li.dataset.match = String(r.match);
    const bar = el("span", "bar");
    const fill = el("i");
    fill.style.width = `${Math.max(2, Math.round((100 * r.score) / top))}%`;
    bar.append(fill);
    head.append(score, bar);
    li.append(head);
    const text = state.texts.get(r.name);
    if (text?.description) li.append(el("p", "desc", text.description));
    const recalled = recalledText(r);
    li.dataset.recalled = recalled;
    if (r.via?.length || recalled) {
      const ul = el("ul", "via");
      for (const v of r.via ?? []) {
        const item = el("li", `edge-line ${v.state}`);
        item.dataset.from = v.from;
        item.dataset.state = v.state;
        item.dataset.weight = String(v.weight);
        item.dataset.type = v.type;
        item.dataset.reverse = v.reverse ? "true" : "false";
        item.append(`↳ ${relation(v)} `, el("b", "", v.from), " ", el("span", `state ${v.state}`, v.state), ` ${v.type} edge, w=${v.weight.toFixed(2)}`);
        ul.append(item);
      }
      if (recalled) {
        const item = el("li", "recall-line", `↳ ${recalled}`);
        item.title = "The memory of past tasks raised this skill: past runs whose tasks shared these words used it.";
        ul.append(item);
      }
      li.append(ul);
    }
    list.append(li);
  });
}

function showGold(p, results, gold) {
  p.replaceChildren();
  p.className = "score-line";
  if (!gold) return;
  const names = new Set(results.map((r) => r.name));
  const missing = [...gold].filter((g) => !names.has(g));
  const found = gold.size - missing.length;
  p.textContent = `${found} of the ${plural(gold.size, "skill")} this sample task needs` + (missing.length ? ` — missing: ${missing.join(", ")}` : " — all there");
  p.classList.add(found === gold.size ? "all" : "some");
}

/**
 * The answer's neighbourhood: the answer (main), the next skills of the wider query (wide, whose
 * head is the answer), the sources of their evidence that neither holds (at most SOURCES), and
 * the published edges their evidence names. Its size is k + NEAR + SOURCES at most, whatever the
 * library's.
 */
function showGraph(main, wide, k) {
  const inAnswer = new Set(main.map((r) => r.name));
  const nodes = [];
  const seen = new Set();
  const add = (node) => {
    if (seen.has(node.name)) return;
    seen.add(node.name);
    nodes.push({ ...node, rank: nodes.length + 1 });
  };
  for (const r of main) {
    add({ name: r.name, ...evidence(r) });
  }
  for (const r of wide) if (!inAnswer.has(r.name) && nodes.length < k + NEAR) add({ name: r.name, kind: "near", label: "outside" });
  const shown = [...main, ...wide.filter((r) => seen.has(r.name))];
  let sources = 0;
  for (const r of shown) {
    for (const v of r.via ?? []) {
      if (seen.has(v.from) || sources >= SOURCES) continue;
      sources++;
      add({ name: v.from, kind: "source", label: "evidence source" });
    }
  }
  const edges = [];
  for (const r of shown) {
    for (const v of r.via ?? []) {
      // A published edge u→v means u comes first; reverse flow ran against the edge.
      const [from, to] = v.reverse ? [r.name, v.from] : [v.from, r.name];
      edges.push({ from, to, state: v.state, type: v.type, weight: v.weight });
    }
  }
  state.drawn = { nodes, edges };
  draw();
}

/** Draws the last answer's graph for the width the box has now, and says when it scrolls. */
function draw() {
  if (!state.drawn) return;
  const { scrolls } = drawGraph($("graph"), state.drawn.nodes, state.drawn.edges, showSkill);
  $("graph-scroll").hidden = !scrolls;
}

function showSkill(name) {
  const panel = $("skill");
  panel.replaceChildren();
  panel.dataset.name = name;
  panel.append(el("h3", "", name));
  const t = state.texts.get(name);
  if (!t) {
    panel.append(el("p", "note", "This skill's text is not in the current answer."));
    return;
  }
  panel.append(el("p", "desc", t.description));
  if (t.source) panel.append(el("p", "source", `source: ${t.source}`));
  if (t.evidence.length) {
    const ul = el("ul", "via");
    for (const e of t.evidence) ul.append(el("li", "", e));
    panel.append(ul);
  }
  if (t.body) panel.append(el("pre", "body", t.body));
  for (const li of document.querySelectorAll("#graph .gnode")) li.classList.toggle("selected", li.dataset.name === name);
}

function showBundle(text) {
  $("bundle").textContent = text ?? "";
  $("bundle-size").textContent = text ? `${fmtInt([...text].length)} characters (default budgets)` : "";
}

async function copyBundle() {
  const text = $("bundle").textContent;
  const btn = $("copy");
  try {
    await navigator.clipboard.writeText(text);
    btn.textContent = "Copied";
  } catch {
    const range = document.createRange();
    range.selectNodeContents($("bundle"));
    getSelection().removeAllRanges();
    getSelection().addRange(range);
    btn.textContent = document.execCommand("copy") ? "Copied" : "Selected: press Ctrl+C";
  }
  setTimeout(() => (btn.textContent = "Copy"), 1500);
}

// ---- status ----------------------------------------------------------------------------------

function setStatus(text) {
  $("status").textContent = text;
}

function showError(text) {
  $("error").textContent = text;
  $("error").hidden = false;
}

function hideError() {
  $("error").hidden = true;
}

/** Appends text to parent, its `backticked` spans as code elements (never as HTML). */
function withCode(parent, text) {
  text.split("`").forEach((part, i) => {
    if (part) parent.append(i % 2 ? el("code", "", part) : part);
  });
}

/** Shows the engine's note on an answer (no term of the query is known, say), or hides it. */
function showNote(text) {
  $("query-note").textContent = text ?? "";
  $("query-note").hidden = !text;
}

const fmtInt = (n) => Number(n).toLocaleString("en-US");

/** "1 skill", "2 skills", "1,024 skills". */
const plural = (n, word) => `${fmtInt(n)} ${word}${Number(n) === 1 ? "" : "s"}`;

function fmtBytes(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1 << 20) return `${(n / 1024).toFixed(0)} KiB`;
  return `${(n / (1 << 20)).toFixed(1)} MiB`;
}

init().catch((err) => showError(`The playground could not start: ${err.message}`));
