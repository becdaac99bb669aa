// graph.js — draws the answer's neighbourhood as SVG: the ranked skills, the skills just outside
// the answer and the sources of their evidence, with the published edges among them. A layered
// layout: each connected group of skills is a band of its own, and in a band every dependency or
// workflow edge points right (prerequisites and earlier steps on the left), so a chain reads as a
// chain. Similarity and alternative edges carry no order: they are drawn once per pair, without
// arrows, and place a skill only when nothing else does. Skills no edge touches sit in a grid
// below. The drawing's size follows the number of drawn skills, never the library's.
// Deterministic: the same nodes and edges give the same picture.
//
// Node names go into the SVG as text nodes only (textContent), never as markup.

const SVG = "http://www.w3.org/2000/svg";
const W = 184; // node box, at least; wider when the names need it and the room allows (nodeWidth)
const MAX_W = 360; // node box, at most
const H = 42;
const GAP_X = 64;
const GAP_Y = 16;
const BAND_GAP = 34; // between two groups of linked skills
const PAD = 16;
const SLOT = 10; // height of an edge's passage through a column
const ARC_ROOM = 96; // right of the last column, for arcs between skills of one column
const LABEL_PAD = 20; // a box's width less the room for its name

/** Edge types with an order (u before v); the others are undirected. */
const ORDERED = new Set(["dependency", "workflow"]);
/** Edge kinds as the legend names them, by the engine's edge type. */
export const KINDS = { dependency: "needs", workflow: "then", semantic: "similar", alternative: "alternative" };

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/**
 * The edges to draw: those between two drawn nodes, an ordered edge once per direction and an
 * undirected one once per pair (the strongest copy), as {from, to, state, type, weight, directed}.
 */
export function drawnEdges(nodes, edges) {
  const index = new Map(nodes.map((n, i) => [n.name, i]));
  const out = new Map();
  for (const e of edges) {
    if (!index.has(e.from) || !index.has(e.to) || e.from === e.to) continue;
    const directed = ORDERED.has(e.type);
    let [from, to] = [e.from, e.to];
    if (!directed && index.get(from) > index.get(to)) [from, to] = [to, from];
    const key = `${e.type}\u0000${from}\u0000${to}`;
    const old = out.get(key);
    if (!old || old.weight < e.weight) out.set(key, { ...e, from, to, directed });
  }
  return [...out.values()];
}

/**
 * Lays out nodes ({name, kind: "seed"|"via"|"plain"|"near"|"source", rank, label}, in rank order)
 * and edges ({from, to, state, type, weight}) and draws them into container, replacing what it
 * held. onSelect(name) is called when a node is clicked or chosen with the keyboard. The node
 * boxes grow to their names while the drawing fits the container's width. Returns {scrolls}:
 * whether the drawing is wider than the container even scaled down, so that the box scrolls.
 */
export function drawGraph(container, nodes, edges, onSelect) {
  container.replaceChildren();
  container.dataset.scrolls = "false";
  if (nodes.length === 0) return { scrolls: false };
  const index = new Map(nodes.map((n, i) => [n.name, i]));
  edges = drawnEdges(nodes, edges);
  const room = container.clientWidth;
  const L = fitLayout(nodes, edges, index, room, nameWidths(container, nodes));
  const { pos, width, height, isolatedY, w } = L;

  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Graph of the answer's skills and edges" });
  // Scale down to the container's width, never up; below 60 % the box scrolls instead.
  root.style.width = "100%";
  root.style.maxWidth = `${width}px`;
  root.style.minWidth = `${Math.round(Math.min(width * 0.6, 520))}px`;
  root.dataset.columns = String(L.columns);
  root.dataset.bands = String(L.bands);
  root.dataset.nodeWidth = String(w);
  const defs = svg("defs");
  for (const type of ORDERED) {
    const m = svg("marker", { id: `arrow-${type}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerUnits: "userSpaceOnUse", markerWidth: 9, markerHeight: 9, orient: "auto-start-reverse" });
    m.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrowhead t-${type}` }));
    defs.append(m);
  }
  root.append(defs);
  const labels = [];
  if (isolatedY !== null) {
    const t = svg("text", { x: PAD, y: isolatedY - 8, class: "glabel" });
    t.textContent = "not linked to the others by a published edge:";
    root.append(t);
    labels.push([t, width - 2 * PAD]);
  }

  const edgeLayer = svg("g", { class: "gedges" });
  for (const r of route(edges, index, L)) {
    const e = r.edge;
    const type = e.type in KINDS ? e.type : "other";
    const state = ["confirmed", "uncertain", "scaffold"].includes(e.state) ? e.state : "other";
    const faint = [e.from, e.to].some((name) => nodes[index.get(name)].kind === "near");
    const p = svg("path", {
      d: r.d,
      class: `gedge t-${type} ${state}${faint ? " faint" : ""}`,
      "stroke-width": (1.2 + 3 * Math.max(0, Math.min(1, e.weight))).toFixed(2),
    });
    if (e.directed) p.setAttribute("marker-end", `url(#arrow-${e.type})`);
    p.dataset.from = e.from;
    p.dataset.to = e.to;
    p.dataset.type = e.type;
    p.dataset.state = e.state;
    p.dataset.directed = e.directed ? "true" : "false";
    const title = svg("title");
    const arrow = e.directed ? "→" : "—";
    title.textContent = `${e.from} ${arrow} ${e.to}: ${KINDS[e.type] ?? e.type} (${e.type} edge, ${e.state}), w=${e.weight.toFixed(2)}`;
    p.append(title);
    edgeLayer.append(p);
  }
  root.append(edgeLayer);

  const nodeLayer = svg("g", { class: "gnodes" });
  nodes.forEach((n, i) => {
    const { x, y } = pos[i];
    const g = svg("g", { class: `gnode ${n.kind}`, transform: `translate(${x},${y})`, tabindex: 0, role: "button" });
    g.dataset.name = n.name;
    g.append(svg("rect", { width: w, height: H, rx: 7, ry: 7 }));
    const name = svg("text", { x: 10, y: 17, class: "gname" });
    name.textContent = n.name;
    const sub = svg("text", { x: 10, y: 33, class: "gsub" });
    sub.textContent = `#${n.rank} · ${n.label}`;
    const title = svg("title");
    title.textContent = `${n.name} (#${n.rank}, ${n.label}) — click to read`;
    g.append(title, name, sub);
    labels.push([name, w - LABEL_PAD, n.name], [sub, w - LABEL_PAD]);
    g.addEventListener("click", () => onSelect(n.name));
    g.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") {
        ev.preventDefault();
        onSelect(n.name);
      }
    });
    nodeLayer.append(g);
  });
  root.append(nodeLayer);
  container.append(root);
  // Now that the text is rendered, shorten what is wider than its room: a character count
  // cannot know the font. (Hidden, the lengths read 0 and the count's cut stands.)
  for (const [t, room, full] of labels) fit(t, room, full ?? t.textContent);
  // Narrower than its drawing at the smallest scale, the box scrolls sideways: say so.
  const scrolls = container.scrollWidth > container.clientWidth + 1;
  container.dataset.scrolls = scrolls ? "true" : "false";
  return { scrolls };
}

/**
 * The width each node's name takes as the page draws it, measured in a drawing of the names
 * alone; 0 for all when the container is not laid out (hidden).
 */
function nameWidths(container, nodes) {
  const probe = svg("svg", { width: 1, height: 1, "aria-hidden": "true" });
  probe.style.position = "absolute";
  probe.style.visibility = "hidden";
  const texts = nodes.map((n) => {
    const g = svg("g", { class: `gnode ${n.kind}` });
    const t = svg("text", { class: "gname" });
    t.textContent = n.name;
    g.append(t);
    probe.append(g);
    return t;
  });
  container.append(probe);
  const widths = texts.map((t) => t.getComputedTextLength());
  probe.remove();
  return widths;
}

/**
 * The layout with the widest node box up to what the longest name needs (W to MAX_W) whose
 * drawing fits room pixels; the narrowest, W, when none does (the box then scales it down or
 * scrolls). Names are cut only when their box cannot grow.
 */
function fitLayout(nodes, edges, index, room, widths) {
  const need = Math.min(MAX_W, Math.ceil(Math.max(0, ...widths) + LABEL_PAD));
  for (let w = Math.max(W, need); w > W; w -= 8) {
    const L = layout(nodes, edges, index, w);
    if (L.width <= room) return L;
  }
  return layout(nodes, edges, index, W);
}

/** Shortens text element t, with an ellipsis, until it is at most room wide. */
function fit(t, room, full) {
  if (t.getComputedTextLength() <= room) return;
  const cs = [...full];
  let lo = 0, hi = Math.min(cs.length, [...t.textContent].length); // lo fits (0 chars + "…")
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    t.textContent = cs.slice(0, mid).join("") + "…";
    if (t.getComputedTextLength() <= room) lo = mid;
    else hi = mid - 1;
  }
  t.textContent = cs.slice(0, lo).join("") + "…";
}

/**
 * Paths for the edges. Each end of an edge takes a port on a side of its node (right for
 * leaving, left for arriving; both on the right for an arc within a column or against the
 * layering); the ports of one side are spread over its height in the order of the far ends, so
 * edges do not start or end on top of each other and two edges between one pair differ.
 */
function route(edges, index, { pos, layerOf, bends, w: W }) {
  const ends = new Map(); // "node side" → [{r, end, other}]
  const rs = edges.map((edge, i) => {
    let [u, v] = [index.get(edge.from), index.get(edge.to)];
    const forward = layerOf[v] > layerOf[u];
    const backward = layerOf[v] < layerOf[u];
    // An undirected edge runs left to right; an ordered one against the layering (a cycle)
    // or within a column takes an arc on the right.
    let flip = false;
    if (!edge.directed && backward) [u, v, flip] = [v, u, true];
    const arc = !(forward || (flip && !edge.directed));
    const ds = bends.get(i) ?? [];
    const r = { edge, u, v, arc, ds, y1: 0, y2: 0 };
    const add = (node, side, end, other) => {
      const key = `${node} ${side}`;
      if (!ends.has(key)) ends.set(key, []);
      ends.get(key).push({ r, end, other });
    };
    add(u, "R", 1, ds.length ? ds[0] : v);
    add(v, arc ? "R" : "L", 2, ds.length ? ds[ds.length - 1] : u);
    return r;
  });
  for (const [key, list] of ends) {
    const node = Number(key.split(" ")[0]);
    list.sort((a, b) => pos[a.other].y - pos[b.other].y || pos[a.other].x - pos[b.other].x || a.other - b.other || a.end - b.end);
    list.forEach((p, i) => {
      const y = pos[node].y + (H * (i + 1)) / (list.length + 1);
      if (p.end === 1) p.r.y1 = y;
      else p.r.y2 = y;
    });
  }
  return rs.map((r) => {
    const a = pos[r.u];
    const b = pos[r.v];
    let d;
    if (!r.arc) {
      // Through each passage straight, between columns a curve.
      let [x, y] = [a.x + W, r.y1];
      d = `M${x},${y.toFixed(1)}`;
      const curve = (x2, y2) => {
        const c = (x2 - x) / 2;
        d += ` C${x + c},${y.toFixed(1)} ${x2 - c},${y2.toFixed(1)} ${x2},${y2.toFixed(1)}`;
        [x, y] = [x2, y2];
      };
      for (const dm of r.ds) {
        const p = pos[dm];
        curve(p.x, p.y + SLOT / 2);
        x = p.x + W;
        d += ` L${x},${y.toFixed(1)}`;
      }
      curve(b.x, r.y2);
    } else {
      const x1 = a.x + W, x2 = b.x + W;
      const bulge = Math.min(ARC_ROOM - 12, 22 + Math.abs(r.y2 - r.y1) / 4 + Math.abs(x2 - x1) / 8);
      d = `M${x1},${r.y1.toFixed(1)} C${x1 + bulge},${r.y1.toFixed(1)} ${x2 + bulge},${r.y2.toFixed(1)} ${x2},${r.y2.toFixed(1)}`;
    }
    return { edge: r.edge, d };
  });
}

/**
 * Positions of the nodes. Linked nodes form bands, one per connected group, stacked top to
 * bottom by their best rank; in a band, columns are layers. The unlinked ones fill a grid below.
 */
function layout(nodes, edges, index, W) {
  const n = nodes.length;
  const out = nodes.map(() => []);
  const inn = nodes.map(() => []);
  const adj = nodes.map(() => []); // every edge, either way
  const ordered = nodes.map(() => false);
  for (const e of edges) {
    const [u, v] = [index.get(e.from), index.get(e.to)];
    adj[u].push(v);
    adj[v].push(u);
    if (!e.directed) continue;
    ordered[u] = ordered[v] = true;
    out[u].push(v);
    inn[v].push(u);
  }
  for (const l of [...out, ...inn, ...adj]) l.sort((a, b) => a - b);

  // Break cycles: a depth-first search, from the nodes nothing points to first and then in rank
  // order, marks edges back to the path as back edges.
  const back = new Set();
  const mark = new Array(n).fill(0); // 0 new, 1 on the path, 2 done
  const visit = (u) => {
    mark[u] = 1;
    for (const v of out[u]) {
      if (mark[v] === 1) back.add(u * n + v);
      else if (mark[v] === 0) visit(v);
    }
    mark[u] = 2;
  };
  const starts = nodes.map((_, i) => i).sort((a, b) => (inn[a].length > 0) - (inn[b].length > 0) || a - b);
  for (const u of starts) if (mark[u] === 0) visit(u);
  const fwd = (u, v) => !back.has(u * n + v);

  // Longest-path layers over the forward edges, in a topological order that prefers rank.
  const layer = new Array(n).fill(-1);
  const indeg = inn.map((l, v) => l.filter((u) => fwd(u, v)).length);
  const ready = [];
  for (let v = 0; v < n; v++) if (ordered[v] && indeg[v] === 0) (ready.push(v), (layer[v] = 0));
  while (ready.length) {
    ready.sort((a, b) => a - b);
    const u = ready.shift();
    for (const v of out[u]) {
      if (!fwd(u, v)) continue;
      layer[v] = Math.max(layer[v], layer[u] + 1);
      if (--indeg[v] === 0) ready.push(v);
    }
  }

  // Connected groups, in rank order of their best member.
  const group = new Array(n).fill(-1);
  const groups = [];
  for (let s = 0; s < n; s++) {
    if (group[s] >= 0 || adj[s].length === 0) continue;
    const members = [s];
    group[s] = groups.length;
    for (let i = 0; i < members.length; i++) {
      for (const v of adj[members[i]]) if (group[v] < 0) (group[v] = groups.length, members.push(v));
    }
    groups.push(members.sort((a, b) => a - b));
  }

  // A node with only undirected edges goes one column right of its nearest placed neighbour,
  // found breadth first from the ordered nodes or, in a group without any, from its best-ranked
  // member: similar skills spread into columns instead of piling up in one.
  for (const members of groups) {
    let frontier = members.filter((v) => layer[v] >= 0);
    if (frontier.length === 0) (layer[members[0]] = 0), (frontier = [members[0]]);
    while (frontier.length) {
      const next = [];
      for (const u of frontier) {
        for (const v of adj[u]) if (layer[v] < 0) (layer[v] = layer[u] + 1), next.push(v);
      }
      frontier = next.sort((a, b) => a - b);
    }
  }

  // An edge across more than one column passes through a slot in each column between (a
  // "dummy" in Sugiyama's terms, numbered from n), so it runs beside the skills, not over them.
  const pos = [];
  const bends = new Map(); // edge index → dummies, from its left end
  const chain = nodes.map((_, v) => [...adj[v]]); // neighbours for the ordering, dummies included
  let y = PAD;
  let maxCols = 0;
  for (const members of groups) {
    const columns = [];
    for (const v of members) (columns[layer[v]] ??= []).push(v);
    const cols = [];
    for (const c of columns) if (c) cols.push(c); // no empty columns
    cols.forEach((col, c) => col.forEach((v) => (layer[v] = c)));
    maxCols = Math.max(maxCols, cols.length);
    const inGroup = new Set(members);
    edges.forEach((e, i) => {
      let [u, v] = [index.get(e.from), index.get(e.to)];
      if (!inGroup.has(u)) return;
      if (!e.directed && layer[v] < layer[u]) [u, v] = [v, u];
      if (layer[v] - layer[u] < 2) return; // adjacent, one column or a cycle's arc
      const ds = [];
      let prev = u;
      for (let c = layer[u] + 1; c < layer[v]; c++) {
        const d = chain.length;
        chain.push([prev]);
        chain[prev].push(d);
        layer[d] = c;
        cols[c].push(d);
        ds.push(d);
        prev = d;
      }
      chain[prev].push(v);
      chain[v].push(prev);
      chain[u].splice(chain[u].indexOf(v), 1);
      chain[v].splice(chain[v].indexOf(u), 1);
      bends.set(i, ds);
    });

    // Order within columns: sweeps of barycentres of the neighbours' rows, ties by rank.
    const row = [];
    cols.forEach((col) => col.forEach((v, r) => (row[v] = r)));
    const sweep = (list) => {
      for (const col of list) {
        const key = new Map(col.map((v) => {
          const ns = chain[v].filter((u) => layer[u] !== layer[v]);
          return [v, ns.length ? ns.reduce((s, u) => s + row[u], 0) / ns.length : row[v]];
        }));
        col.sort((a, b) => key.get(a) - key.get(b) || a - b);
        col.forEach((v, r) => (row[v] = r));
      }
    };
    for (let i = 0; i < 3; i++) {
      sweep(cols.slice(1));
      sweep(cols.slice(0, -1).reverse());
    }
    const size = (v) => (v < n ? H : SLOT);
    const colH = (col) => col.reduce((s, v) => s + size(v) + GAP_Y, -GAP_Y);
    const bandH = Math.max(...cols.map(colH));
    cols.forEach((col, c) => {
      let at = y + (bandH - colH(col)) / 2;
      for (const v of col) {
        pos[v] = { x: PAD + c * (W + GAP_X), y: at };
        at += size(v) + GAP_Y;
      }
    });
    y += bandH + BAND_GAP;
  }
  const lonely = nodes.map((_, i) => i).filter((i) => adj[i].length === 0);
  // Up to six a row: at k = 50 the grid stays about as wide as it is tall.
  const perRow = Math.max(1, Math.min(lonely.length, Math.max(3, maxCols, Math.min(6, Math.ceil(Math.sqrt(lonely.length))))));
  let width = PAD * 2 + Math.max(maxCols * (W + GAP_X) - GAP_X + (groups.length ? ARC_ROOM : 0), perRow * (W + 18) - 18);
  let height = groups.length ? y - BAND_GAP + PAD : PAD;
  let isolatedY = null;
  if (lonely.length) {
    isolatedY = height + (groups.length ? 24 : 18);
    lonely.forEach((v, j) => {
      pos[v] = { x: PAD + (j % perRow) * (W + 18), y: isolatedY + Math.floor(j / perRow) * (H + GAP_Y) };
    });
    height = isolatedY + Math.ceil(lonely.length / perRow) * (H + GAP_Y) - GAP_Y + PAD;
  }
  for (let v = 0; v < n; v++) if (adj[v].length === 0) layer[v] = -1;
  return { pos, bends, width, height, isolatedY, layerOf: layer, columns: maxCols, bands: groups.length, w: W };
}
