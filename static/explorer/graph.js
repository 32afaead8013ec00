/* The cognitive graph: frames as labelled boxes, relations as named arrows, sources as
 * dashed arrows, event leaves on demand.
 *
 * Layout: fCoSE (a force-directed layout made for Cytoscape) run with a fixed random seed on
 * nodes in a fixed order, so the same graph is laid out the same way. Once laid out, frames
 * keep their place (place.js): a reload or a new frame moves nothing. Frames with no edge at
 * all are grouped in one box and tiled, instead of scattering across the canvas. The first
 * view fits the graph but never zooms out below a readable label size (then it centres on
 * the busiest frame) nor in beyond a comfortable one (small graphs do not blow up); labels
 * hide themselves when a person zooms far out. Labels are drawn on a canvas, so text from a
 * model never becomes markup.
 */

import { $, el, clear, emit, isEventRef } from "./dom.js";
import { model } from "./model.js";
import { placeNew, remember, remembered } from "./place.js";

const FONT_SIZE = 14;
const FONT_FAMILY = getComputedStyle(document.documentElement).fontFamily || "sans-serif";
export const READABLE_ZOOM = 0.78; // 14 px labels drawn at 11 px or more
const MAX_START_ZOOM = 1.25;
const SINGLES = "group:singles";
const COLOURS = { active: "#2e7d32", retiring: "#c46a00", retired: "#e0e0e0" };
const TEXT = { active: "#ffffff", retiring: "#ffffff", retired: "#4a5561" };

const measure = document.createElement("canvas").getContext("2d");
measure.font = FONT_SIZE + "px " + FONT_FAMILY;
function labelWidth(text) {
  return Math.ceil(measure.measureText(text).width) + 18;
}

export const cy = cytoscape({
  container: $("graph"),
  minZoom: 0.1,
  maxZoom: 2.5,
  style: [
    {
      selector: "node.frame",
      style: {
        shape: "round-rectangle",
        width: "data(w)",
        height: 26,
        "background-color": COLOURS.active,
        label: "data(label)",
        color: TEXT.active,
        "font-size": FONT_SIZE,
        "font-family": FONT_FAMILY,
        "text-valign": "center",
        "text-halign": "center",
        "min-zoomed-font-size": 7, // labels hide when zoomed far out, and come back
        "border-width": 0,
      },
    },
    { selector: "node.retiring", style: { "background-color": COLOURS.retiring, color: TEXT.retiring } },
    {
      selector: "node.retired",
      style: {
        "background-color": COLOURS.retired,
        color: TEXT.retired,
        "border-width": 1,
        "border-color": "#9e9e9e",
        "border-style": "dashed",
      },
    },
    { selector: "node.protected", style: { "border-width": 3, "border-color": "#1565c0", "border-style": "solid" } },
    {
      selector: "node.group",
      style: {
        shape: "round-rectangle",
        "background-color": "#f3f5f8",
        "background-opacity": 1,
        "border-width": 1,
        "border-color": "#c9ced6",
        "border-style": "dashed",
        label: "data(label)",
        color: "#67707c",
        "font-size": 12,
        "text-valign": "top",
        "text-halign": "center",
        "text-margin-y": -4,
        padding: 12,
        "min-zoomed-font-size": 7,
      },
    },
    {
      selector: "node.event",
      style: {
        shape: "ellipse",
        "background-color": "#90caf9",
        label: "data(label)",
        "font-size": 10,
        color: "#445",
        "text-valign": "bottom",
        "text-margin-y": 2,
        "min-zoomed-font-size": 7,
        width: 12,
        height: 12,
      },
    },
    { selector: "node.event.retired-event", style: { "background-color": "#d6e6f5" } },
    {
      selector: "edge.relation",
      style: {
        width: 1.5,
        "line-color": "#7b8794",
        "target-arrow-color": "#7b8794",
        "target-arrow-shape": "triangle",
        "curve-style": "bezier",
        label: "data(name)",
        "font-size": 11,
        color: "#37474f",
        "min-zoomed-font-size": 8,
        "text-rotation": "autorotate",
        "text-background-color": "#fff",
        "text-background-opacity": 0.9,
        "text-background-padding": 2,
      },
    },
    {
      selector: "edge.source",
      style: {
        width: 1,
        "line-style": "dashed",
        "line-color": "#b0b8c1",
        "target-arrow-shape": "vee",
        "target-arrow-color": "#b0b8c1",
        "curve-style": "bezier",
      },
    },
    { selector: "node.frame:selected", style: { "underlay-color": "#1565c0", "underlay-opacity": 0.35, "underlay-padding": 5 } },
    { selector: "node.hit", style: { "underlay-color": "#fdd835", "underlay-opacity": 0.8, "underlay-padding": 6 } },
    { selector: "node.changed", style: { "underlay-color": "#ff7043", "underlay-opacity": 0.7, "underlay-padding": 6 } },
    { selector: "node.added", style: { "underlay-color": "#00c853", "underlay-opacity": 0.8, "underlay-padding": 6 } },
    { selector: "node.seen", style: { "underlay-color": "#7e57c2", "underlay-opacity": 0.6, "underlay-padding": 5 } },
  ],
});

/* Mulberry32: a small seeded generator. fCoSE draws its start positions with Math.random,
 * so the layout runs with this one in its place and gives the same result every time. */
function seeded(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
function runLayout(options) {
  const random = Math.random;
  Math.random = seeded(20260101);
  try {
    cy.layout(options).run();
  } finally {
    Math.random = random;
  }
}
/* fCoSE leaves unconnected pieces far apart; pack them into rows instead (largest first),
 * as wide as the canvas, so as much as possible shows at a readable zoom. */
function packPieces() {
  const group = cy.getElementById(SINGLES);
  const loose = cy.nodes().not(".group").filter((n) => !n.isChild());
  const pieces = loose.union(loose.connectedEdges()).components().map((c) => c.nodes());
  if (group.nonempty()) pieces.push(group.union(group.children()));
  if (pieces.length < 2) return;
  const GAP = 30;
  const boxes = pieces.map((nodes) => ({ nodes, box: nodes.boundingBox({ includeLabels: true }) }));
  boxes.sort((a, b) => b.box.h - a.box.h || b.box.w - a.box.w || (a.nodes.first().id() < b.nodes.first().id() ? -1 : 1));
  // Rows as wide as the canvas shows at a readable zoom.
  const rowWidth = Math.max(boxes[0].box.w, (cy.width() - 48) / READABLE_ZOOM);
  let x = 0;
  let y = 0;
  let rowHeight = 0;
  for (const piece of boxes) {
    if (x > 0 && x + piece.box.w > rowWidth) {
      x = 0;
      y += rowHeight + GAP;
      rowHeight = 0;
    }
    const dx = x - piece.box.x1;
    const dy = y - piece.box.y1;
    piece.nodes.filter((n) => !n.isParent()).shift({ x: dx, y: dy });
    x += piece.box.w + GAP;
    rowHeight = Math.max(rowHeight, piece.box.h);
  }
}

function layoutOptions(randomize) {
  const large = cy.nodes().length > 300;
  return {
    name: "fcose",
    quality: large ? "default" : "proof",
    randomize,
    animate: false,
    fit: false,
    packComponents: false,
    nodeDimensionsIncludeLabels: true,
    nodeSeparation: 60,
    nodeRepulsion: () => 4500,
    idealEdgeLength: () => 50,
    edgeElasticity: () => 0.45,
    gravity: 0.5,
    gravityRange: 2.5,
    numIter: large ? 600 : 2500,
    tile: true,
    tilingPaddingVertical: 10,
    tilingPaddingHorizontal: 14,
    tilingCompareBy: (a, b) => (a < b ? -1 : a > b ? 1 : 0),
  };
}

function frameNode(frame) {
  const label = frame.id;
  return {
    group: "nodes",
    data: { id: "f:" + frame.id, fid: frame.id, status: frame.status, label, w: labelWidth(label) },
    classes: ["frame", frame.status, frame.protected ? "protected" : ""].join(" ").trim(),
  };
}
function eventNode(ref) {
  const info = model.eventInfo.get(ref);
  const retired = info && info.status === "retired";
  return {
    group: "nodes",
    data: { id: "e:" + ref, ref, label: ref },
    classes: "event" + (retired ? " retired-event" : ""),
  };
}

let showEvents = false;
export function setShowEvents(value) {
  showEvents = value;
  sync(false);
}

/* Nodes and edges the model asks for, nodes in id order (the layout depends on the order). */
function desiredElements() {
  const frames = [...model.frames.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const nodes = new Map();
  const edges = new Map();
  for (const frame of frames) {
    const node = frameNode(frame);
    nodes.set(node.data.id, node);
  }
  for (const frame of frames) {
    for (const ref of frame.sources) {
      let target = null;
      if (isEventRef(ref)) {
        if (!showEvents) continue;
        target = "e:" + ref;
        if (!nodes.has(target)) nodes.set(target, eventNode(ref));
      } else if (model.frames.has(ref)) {
        target = "f:" + ref;
      }
      if (!target) continue;
      const id = "s:" + frame.id + ">" + ref;
      edges.set(id, { group: "edges", data: { id, source: "f:" + frame.id, target }, classes: "source" });
    }
  }
  for (const rel of model.relations) {
    if (!model.frames.has(rel.subject) || !model.frames.has(rel.object)) continue;
    const id = "r:" + rel.subject + ">" + rel.name + ">" + rel.object;
    edges.set(id, {
      group: "edges",
      data: { id, source: "f:" + rel.subject, target: "f:" + rel.object, name: rel.name },
      classes: "relation",
    });
  }
  // Frames with no edge at all share one group box.
  const linked = new Set();
  for (const edge of edges.values()) linked.add(edge.data.source).add(edge.data.target);
  const singles = [...nodes.values()].filter((n) => n.data.fid !== undefined && !linked.has(n.data.id));
  if (singles.length >= 2) {
    for (const node of singles) node.data.parent = SINGLES;
    const label = singles.length + " frames with no relation or frame source";
    nodes.set(SINGLES, { group: "nodes", data: { id: SINGLES, label }, classes: "group" });
  }
  return { nodes, edges };
}

let selected = null;
export function select(id) {
  selected = id;
  cy.elements().unselect();
  if (id) cy.getElementById("f:" + id).select();
}

export function sync(fullLayout) {
  const { nodes, edges } = desiredElements();
  const wanted = new Map([...nodes, ...edges]);
  const added = [];
  cy.batch(() => {
    cy.elements().forEach((ele) => {
      if (!wanted.has(ele.id())) ele.remove();
    });
    const existing = [];
    for (const [id, spec] of wanted) (cy.getElementById(id).empty() ? added : existing).push(spec);
    // New elements first (parents before children, nodes before edges), so an existing
    // frame can then move into a group box that did not exist before.
    const order = (s) => (s.group === "edges" ? 2 : s.data.parent ? 1 : 0);
    if (added.length) cy.add(added.sort((a, b) => order(a) - order(b)));
    for (const spec of existing) {
      let ele = cy.getElementById(spec.data.id);
      if (spec.group === "nodes" && (ele.data("parent") || null) !== (spec.data.parent || null)) {
        ele = ele.move({ parent: spec.data.parent || null });
      }
      const { parent, ...data } = spec.data;
      ele.data(data);
      ele.classes(spec.classes);
    }
  });
  const addedNodes = cy.collection(added.filter((s) => s.group === "nodes").map((s) => cy.getElementById(s.data.id)));
  const past = model.asOf !== null;
  if (fullLayout) {
    layOutAfresh();
    startView();
  } else if (!laidOut || past !== shownPast || (past && model.asOf !== shownAsOf)) {
    // The first paint, or a move between now and the past (or between two past versions).
    if (past) {
      layOutAfresh(); // only what existed then, packed; never remembered
      fitPast();
    } else {
      restore();
      startView();
    }
  } else if (addedNodes.nonempty()) {
    // New frames go into free spots beside their neighbours; every other frame stays put.
    placeNew(cy, addedNodes.not(".group"));
  }
  laidOut = true;
  shownPast = past;
  shownAsOf = model.asOf;
  if (!past) remember(model.context.slug, cy.nodes(".frame"));
  select(selected);
  $("graph-empty").hidden = model.frames.size > 0;
  document.body.dataset.graphNodes = String(cy.nodes().length);
  countOutOfView();
}

let laidOut = false;
let shownPast = false;
let shownAsOf = null;

function layOutAfresh() {
  runLayout(layoutOptions(true));
  packPieces();
}

/* The present as the person left it: remembered positions, and new frames placed beside
 * their neighbours. Nothing remembered (a first visit, another browser): a fresh layout. */
function restore() {
  const known = remembered(model.context.slug);
  const frames = cy.nodes(".frame");
  const kept = frames.filter((n) => known.has(n.data("fid")));
  if (kept.empty()) {
    layOutAfresh();
    return;
  }
  kept.forEach((n) => {
    n.position(known.get(n.data("fid")));
  });
  placeNew(cy, cy.nodes().not(".group").difference(kept));
}

/* The past view shows a version's whole graph: fitted into the canvas (never zoomed up
 * beyond the start limit), whatever its size. */
function fitPast() {
  if (cy.nodes(".frame").empty()) return;
  cy.fit(cy.elements(), 24);
  if (cy.zoom() > MAX_START_ZOOM) {
    cy.zoom(MAX_START_ZOOM);
    cy.center(cy.elements());
  }
}

/* Fit, but keep labels readable and small graphs small. A graph too big to fit readably
 * starts at its top-left corner, where the largest piece is packed; drag or "fit all" for
 * the rest (labels then hide themselves below a legible size). */
export function startView() {
  if (cy.nodes(".frame").empty()) return;
  cy.fit(cy.elements(), 24);
  if (cy.zoom() > MAX_START_ZOOM) {
    cy.zoom(MAX_START_ZOOM);
    cy.center(cy.elements());
  } else if (cy.zoom() < READABLE_ZOOM) {
    const box = cy.elements().boundingBox();
    cy.zoom(READABLE_ZOOM);
    cy.pan({ x: 24 - box.x1 * READABLE_ZOOM, y: 24 - box.y1 * READABLE_ZOOM });
  }
}

export function fit() {
  cy.fit(cy.elements(), 24);
}

export function centreOn(id) {
  const node = cy.getElementById("f:" + id);
  if (node.empty()) return;
  const box = node.renderedBoundingBox();
  const width = cy.width();
  const height = cy.height();
  if (box.x1 < 0 || box.y1 < 0 || box.x2 > width || box.y2 > height) cy.center(node);
}

export function mark(className, ids) {
  cy.nodes().removeClass(className);
  for (const id of ids) cy.getElementById("f:" + id).addClass(className);
}

// ---------------------------------------------------------------- what is out of view
/* The canvas fills the window below the status bar (which grows with the time-travel
 * banner), so the graph never runs below the fold; frames outside the visible part of the
 * canvas are counted in the toolbar, with a button that shows them all. */
const graphBox = $("graph");
const offview = $("graph-offview");

function fitToWindow() {
  const top = graphBox.getBoundingClientRect().top + window.scrollY;
  const height = Math.max(300, Math.floor(window.innerHeight - top - 10));
  if (graphBox.style.height !== height + "px") {
    graphBox.style.height = height + "px";
    cy.resize();
    if (model.asOf !== null) fitPast();
  }
  countOutOfView();
}

/* Frames not wholly inside the part of the canvas the window shows. */
export function outOfView() {
  const rect = graphBox.getBoundingClientRect();
  const x1 = Math.max(0, -rect.left);
  const y1 = Math.max(0, -rect.top);
  const x2 = Math.min(rect.width, window.innerWidth - rect.left);
  const y2 = Math.min(rect.height, window.innerHeight - rect.top);
  return cy.nodes(".frame").filter((n) => {
    const b = n.renderedBoundingBox({ includeLabels: false });
    return b.x1 < x1 || b.y1 < y1 || b.x2 > x2 || b.y2 > y2;
  });
}

let counting = 0;
function countOutOfView() {
  cancelAnimationFrame(counting);
  counting = requestAnimationFrame(() => {
    const hidden = outOfView().length;
    const total = cy.nodes(".frame").length;
    clear(offview);
    offview.hidden = hidden === 0;
    offview.dataset.hidden = String(hidden);
    if (!hidden) return;
    const show = el("button", { type: "button", text: "show all" });
    show.addEventListener("click", fit);
    offview.append(hidden + " of " + total + " frames out of view ", show);
  });
}

cy.on("viewport resize", countOutOfView);
window.addEventListener("resize", fitToWindow);
window.addEventListener("scroll", countOutOfView, { passive: true });
new ResizeObserver(fitToWindow).observe(document.querySelector(".statusbar"));
fitToWindow();

// ---------------------------------------------------------------- hover explanations
const tip = $("graph-tip");
function tipLines(node) {
  if (node.hasClass("group")) {
    return [["b", "frames on their own"], ["", "No relation connects them and they cite no other frame (their sources, if any, are events)."]];
  }
  if (node.hasClass("event")) {
    const e = model.eventInfo.get(node.data("ref")) || {};
    return [
      ["b", node.data("ref") + " · " + (e.kind || "event")],
      ["", (e.status || "recorded") + " · " + (e.size ?? "?") + " characters · click to read"],
      ["pre", (e.preview || "").slice(0, 160)],
    ];
  }
  const frame = model.frames.get(node.data("fid"));
  if (!frame) return [];
  const relations = model.relations.filter((r) => r.subject === frame.id || r.object === frame.id).length;
  return [
    ["b", frame.id],
    ["", frame.status + (frame.protected ? ", protected" : "") + " · revision " + frame.revision +
      " · last changed in version " + frame.changed_version],
    ["", counted(frame.sources.length, "source") + " · " + counted(relations, "relation") + " · ~" + (frame.tokens ?? "?") + " tokens"],
    ["pre", bodyPreview(frame.body)],
  ];
}
/* "1 source", "2 sources". */
export function counted(n, word) {
  return n + " " + word + (n === 1 ? "" : "s");
}
function bodyPreview(body) {
  const lines = Object.entries(body || {}).map(([key, value]) =>
    key + ": " + (typeof value === "string" ? value : JSON.stringify(value)));
  const text = lines.join("\n");
  return text.length > 200 ? text.slice(0, 200) + "…" : text;
}
function hideTip() {
  tip.hidden = true;
}
cy.on("mouseover", "node", (evt) => {
  const lines = tipLines(evt.target);
  if (!lines.length) return;
  clear(tip);
  for (const [tag, text] of lines) tip.append(el(tag || "div", { text }));
  const pos = evt.renderedPosition || evt.target.renderedPosition();
  tip.style.left = Math.min(pos.x + 14, cy.width() - 300) + "px";
  tip.style.top = pos.y + 50 + "px";
  tip.hidden = false;
});
cy.on("mouseout", "node", hideTip);
cy.on("pan zoom tap", hideTip);
$("graph").addEventListener("mouseleave", hideTip);

cy.on("tap", "node.frame", (evt) => emit("select-frame", evt.target.data("fid")));
cy.on("tap", "node.event", (evt) => emit("open-event", evt.target.data("ref")));
