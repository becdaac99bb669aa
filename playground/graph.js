// graph.js — draws the bundle's neighbourhood as SVG: a layered layout in which every published
// edge points right where it can (prerequisites and earlier steps on the left), so a chain of
// skills reads as a chain. Deterministic: the same nodes and edges give the same picture.
//
// Node names go into the SVG as text nodes only (textContent), never as markup.

const SVG = "http://www.w3.org/2000/svg";
const W = 184; // node box
const H = 42;
const GAP_X = 58;
const GAP_Y = 16;
const PAD = 16;
const MAX_LABEL = 23; // characters of a name that fit in a box at 13px

function svg(tag, attrs = {}) {
  const e = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) e.setAttribute(k, String(v));
  return e;
}

/**
 * Lays out nodes ({name, kind: "seed"|"via"|"near", rank, label}, in rank order) and edges
 * ({from, to, state, type, weight}) and draws them into container, replacing what it held.
 * onSelect(name) is called when a node is clicked or chosen with the keyboard.
 */
export function drawGraph(container, nodes, edges, onSelect) {
  container.replaceChildren();
  if (nodes.length === 0) return;
  const index = new Map(nodes.map((n, i) => [n.name, i]));
  edges = edges.filter((e) => index.has(e.from) && index.has(e.to) && e.from !== e.to);
  const { pos, width, height, isolatedY } = layout(nodes, edges, index);

  const root = svg("svg", { viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": "Graph of the bundle's skills and edges" });
  // Scale down to the container's width, never up.
  root.style.width = "100%";
  root.style.maxWidth = `${width}px`;
  root.style.minWidth = `${Math.round(width * 0.8)}px`; // below that, scroll`
  const defs = svg("defs");
  for (const state of ["confirmed", "uncertain", "scaffold", "other"]) {
    const m = svg("marker", { id: `arrow-${state}`, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" });
    m.append(svg("path", { d: "M0,0 L10,5 L0,10 z", class: `arrowhead ${state}` }));
    defs.append(m);
  }
  root.append(defs);
  if (isolatedY !== null) {
    const t = svg("text", { x: PAD, y: isolatedY - 6, class: "glabel" });
    t.textContent = "not linked to the others by a published edge:";
    root.append(t);
  }

  const edgeLayer = svg("g", { class: "gedges" });
  for (const e of edges) {
    const a = pos[index.get(e.from)];
    const b = pos[index.get(e.to)];
    let d;
    if (b.x > a.x) {
      const x1 = a.x + W, y1 = a.y + H / 2, x2 = b.x, y2 = b.y + H / 2;
      const c = (x2 - x1) / 2;
      d = `M${x1},${y1} C${x1 + c},${y1} ${x2 - c},${y2} ${x2},${y2}`;
    } else {
      // Same column or against the layering (a cycle): an arc on the right side.
      const x1 = a.x + W, y1 = a.y + H / 2 + 6, x2 = b.x + W, y2 = b.y + H / 2 - 6;
      const bulge = 28 + Math.min(60, Math.abs(y2 - y1) / 4);
      d = `M${x1},${y1} C${x1 + bulge},${y1} ${x2 + bulge},${y2} ${x2},${y2}`;
    }
    const state = ["confirmed", "uncertain", "scaffold"].includes(e.state) ? e.state : "other";
    const faint = nodes[index.get(e.from)].kind === "near" || nodes[index.get(e.to)].kind === "near";
    const p = svg("path", {
      d,
      class: `gedge ${state}${faint ? " faint" : ""}`,
      "stroke-width": (1.2 + 3 * Math.max(0, Math.min(1, e.weight))).toFixed(2),
      "marker-end": `url(#arrow-${state})`,
    });
    p.dataset.from = e.from;
    p.dataset.to = e.to;
    p.dataset.state = e.state;
    const title = svg("title");
    title.textContent = `${e.from} → ${e.to}: ${e.state} ${e.type} edge, w=${e.weight.toFixed(2)}`;
    p.append(title);
    edgeLayer.append(p);
  }
  root.append(edgeLayer);

  const nodeLayer = svg("g", { class: "gnodes" });
  nodes.forEach((n, i) => {
    const { x, y } = pos[i];
    const g = svg("g", { class: `gnode ${n.kind}`, transform: `translate(${x},${y})`, tabindex: 0, role: "button" });
    g.dataset.name = n.name;
    g.append(svg("rect", { width: W, height: H, rx: 7, ry: 7 }));
    const name = svg("text", { x: 10, y: 17, class: "gname" });
    name.textContent = n.name.length > MAX_LABEL ? n.name.slice(0, MAX_LABEL - 1) + "…" : n.name;
    const sub = svg("text", { x: 10, y: 33, class: "gsub" });
    sub.textContent = `#${n.rank} · ${n.label}`;
    const title = svg("title");
    title.textContent = `${n.name} (#${n.rank}, ${n.label}) — click to read`;
    g.append(title, name, sub);
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
}

/** Positions of the nodes: layers left to right for the linked ones, a row below for the rest. */
function layout(nodes, edges, index) {
  const n = nodes.length;
  // Dependency and workflow edges order the columns; similarity and alternative edges say
  // nothing about order, so they are drawn but do not place nodes.
  const out = nodes.map(() => []);
  const inn = nodes.map(() => []);
  const linked = nodes.map(() => false);
  for (const e of edges) {
    const [u, v] = [index.get(e.from), index.get(e.to)];
    linked[u] = linked[v] = true;
    if (e.type !== "dependency" && e.type !== "workflow") continue;
    out[u].push(v);
    inn[v].push(u);
  }
  for (const l of [...out, ...inn]) l.sort((a, b) => a - b);

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
  const layer = new Array(n).fill(0);
  const indeg = inn.map((l, v) => l.filter((u) => fwd(u, v)).length);
  const ready = [];
  for (let v = 0; v < n; v++) if (indeg[v] === 0) ready.push(v);
  while (ready.length) {
    ready.sort((a, b) => a - b);
    const u = ready.shift();
    for (const v of out[u]) {
      if (!fwd(u, v)) continue;
      layer[v] = Math.max(layer[v], layer[u] + 1);
      if (--indeg[v] === 0) ready.push(v);
    }
  }

  const columns = [];
  for (let i = 0; i < n; i++) {
    if (!linked[i]) continue;
    (columns[layer[i]] ??= []).push(i);
  }
  for (let c = 0; c < columns.length; c++) columns[c] ??= [];

  // Order within columns: two sweeps of barycenters of the neighbours' rows, ties by rank.
  const row = new Array(n).fill(0);
  const setRows = () => columns.forEach((col) => col.forEach((v, r) => (row[v] = r)));
  setRows();
  const sweep = (cols, nbrs) => {
    for (const col of cols) {
      const key = new Map(col.map((v) => {
        const ns = nbrs[v].filter((u) => linked[u] && layer[u] !== layer[v]);
        return [v, ns.length ? ns.reduce((s, u) => s + row[u], 0) / ns.length : row[v]];
      }));
      col.sort((a, b) => key.get(a) - key.get(b) || a - b);
      col.forEach((v, r) => (row[v] = r));
    }
  };
  sweep(columns.slice(1), inn);
  sweep(columns.slice(0, -1).reverse(), out);

  const pos = new Array(n);
  const tall = Math.max(0, ...columns.map((c) => c.length));
  const graphH = tall * (H + GAP_Y) - (tall ? GAP_Y : 0);
  columns.forEach((col, c) => {
    const off = (graphH - (col.length * (H + GAP_Y) - GAP_Y)) / 2;
    col.forEach((v, r) => (pos[v] = { x: PAD + c * (W + GAP_X), y: PAD + off + r * (H + GAP_Y) }));
  });
  let width = PAD * 2 + Math.max(1, columns.length) * (W + GAP_X) - GAP_X + 60; // room for arcs
  let height = PAD * 2 + graphH;
  let isolatedY = null;
  const lonely = nodes.map((_, i) => i).filter((i) => !linked[i]);
  if (lonely.length) {
    const perRow = Math.max(1, Math.min(lonely.length, Math.max(3, columns.length + 1)));
    isolatedY = (tall ? height + 18 : PAD + 18);
    lonely.forEach((v, j) => {
      pos[v] = { x: PAD + (j % perRow) * (W + 18), y: isolatedY + Math.floor(j / perRow) * (H + GAP_Y) };
    });
    const rows = Math.ceil(lonely.length / perRow);
    height = isolatedY + rows * (H + GAP_Y) - GAP_Y + PAD;
    width = Math.max(width, PAD * 2 + perRow * (W + 18) - 18);
  }
  return { pos, width, height, isolatedY };
}
