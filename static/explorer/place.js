/* Frames keep their place. The positions of the present graph are remembered per context in
 * the browser (localStorage), so a reload, or a frame added while the page is open, leaves
 * every frame where the person last saw it: a new frame is put into a free spot beside a
 * neighbour it is connected to (or beside the box of unconnected frames), and nothing else
 * moves. Only "re-layout" lays everything out again. The past view is laid out on its own
 * and never remembered. */

const VERSION = 1;
const MARGIN = 14; // between a new frame and the boxes around it
const HEIGHT = 26; // a frame's box (graph.js draws them 26 px high)

function key(slug) {
  return "morphz:positions:" + slug;
}

/* Remembered positions of `slug`: Map frame id -> {x, y} (empty when none or unreadable). */
export function remembered(slug) {
  try {
    const stored = JSON.parse(localStorage.getItem(key(slug)) || "null");
    if (!stored || stored.v !== VERSION) return new Map();
    return new Map(Object.entries(stored.positions));
  } catch {
    return new Map(); // storage off or a damaged entry: lay out afresh
  }
}

export function remember(slug, frames) {
  const positions = {};
  frames.forEach((node) => {
    const p = node.position();
    positions[node.data("fid")] = { x: p.x, y: p.y }; // unrounded: a reload fits the same zoom
  });
  try {
    localStorage.setItem(key(slug), JSON.stringify({ v: VERSION, positions }));
  } catch {
    // storage full or off: positions then last as long as the page
  }
}

function box(node) {
  const p = node.position();
  const w = node.data("w") || node.width();
  return { x1: p.x - w / 2, x2: p.x + w / 2, y1: p.y - HEIGHT / 2, y2: p.y + HEIGHT / 2 };
}

function clashes(candidate, boxes) {
  return boxes.some(
    (b) => candidate.x1 < b.x2 + MARGIN && b.x1 < candidate.x2 + MARGIN &&
      candidate.y1 < b.y2 + MARGIN && b.y1 < candidate.y2 + MARGIN);
}

/* Put each of `added` (frame nodes) in the first free spot around its anchor: a placed
 * neighbour, else the last frame of its group box, else below everything. Rings of
 * candidates widen until one overlaps no frame. Deterministic: the same graph and order
 * give the same spots. */
export function placeNew(cy, added) {
  const placed = cy.nodes(".frame").difference(added);
  const boxes = placed.map(box);
  const all = placed.nonempty() ? placed.boundingBox() : { x1: 0, y1: 0, x2: 0, y2: 0 };
  added.forEach((node) => {
    const w = node.data("w") || 80;
    const neighbours = node.neighborhood("node.frame").intersection(placed);
    const siblings = node.isChild() ? node.siblings().intersection(placed) : cy.collection();
    let anchor;
    if (neighbours.nonempty()) anchor = neighbours.first().position();
    else if (siblings.nonempty()) anchor = siblings.last().position();
    else anchor = { x: all.x1 + w / 2, y: all.y2 + 60 };
    const step = { x: w / 2 + 60, y: HEIGHT + MARGIN + 10 };
    let spot = null;
    for (let ring = 1; ring <= 40 && !spot; ring++) {
      for (let dy = -ring; dy <= ring && !spot; dy++) {
        for (const dx of [ring, -ring, ...Array.from({ length: 2 * ring - 1 }, (_, i) => i - ring + 1)]) {
          if (Math.abs(dx) !== ring && Math.abs(dy) !== ring) continue; // the ring's edge only
          const x = anchor.x + dx * step.x;
          const y = anchor.y + dy * step.y;
          const candidate = { x1: x - w / 2, x2: x + w / 2, y1: y - HEIGHT / 2, y2: y + HEIGHT / 2 };
          if (!clashes(candidate, boxes)) {
            spot = { x, y };
            boxes.push(candidate);
            break;
          }
        }
      }
    }
    node.position(spot || { x: all.x2 + w, y: anchor.y });
    placed.merge(node);
  });
}
