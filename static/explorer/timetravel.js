/* Time travel: the graph and the side panel as of an earlier version (the API's as_of
 * reads), with what that version changed highlighted against the one before it (or any
 * other version picked to compare with). Corrections are off while looking at the past. */

import { fetchAll } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { mark } from "./graph.js";
import { model, refreshAll } from "./model.js";
import { selection } from "./frame.js";

const slider = $("tt-slider");
const banner = $("tt-banner");

async function framesAt(version) {
  const frames = await fetchAll("frames/?limit=500&as_of=" + version, "frames");
  return new Map(frames.map((f) => [f.id, f]));
}

/* What differs between two sets of frames: new ids, and changed revision, status or flag. */
export function compare(before, after) {
  const added = [];
  const changed = [];
  for (const [id, frame] of after) {
    const old = before.get(id);
    if (!old) added.push(id);
    else if (old.revision !== frame.revision || old.status !== frame.status || old.protected !== frame.protected) {
      changed.push(id);
    }
  }
  return { added, changed };
}

function describe(id, before, after) {
  const old = before.get(id);
  const now = after.get(id);
  if (!old) return id + " (new)";
  const parts = [];
  if (old.revision !== now.revision) parts.push("revision " + old.revision + " → " + now.revision);
  if (old.status !== now.status) parts.push(old.status + " → " + now.status);
  if (old.protected !== now.protected) parts.push(now.protected ? "protected" : "unprotected");
  return id + " (" + parts.join(", ") + ")";
}

export function renderSlider() {
  const latest = model.context.version;
  const viewing = model.asOf === null ? latest : model.asOf;
  slider.max = String(latest);
  slider.value = String(viewing);
  $("tt-value").textContent = model.asOf === null ? "now (" + latest + ")" : String(viewing);
}

export async function travel(version, compareWith) {
  const latest = model.context.version;
  const target = Math.max(0, Math.min(latest, version));
  const base = compareWith === undefined ? target - 1 : compareWith;
  model.asOf = target >= latest ? null : target;
  try {
    await refreshAll(selection.id);
  } catch (err) {
    model.asOf = null;
    await refreshAll(selection.id);
    emit("refreshed");
    renderSlider();
    clear(banner).append(el("span", { class: "error", text: "Could not read version " + target + ": " + err.message }));
    banner.hidden = false;
    return;
  }
  document.body.dataset.asOf = model.asOf === null ? "" : String(model.asOf);
  $("explorer").classList.toggle("past", model.asOf !== null);
  emit("refreshed");
  renderSlider();
  clear(banner);
  banner.hidden = model.asOf === null && compareWith === undefined;
  if (base < 0 || (model.asOf === null && compareWith === undefined)) {
    mark("added", []);
    mark("changed", []);
    return;
  }
  const before = await framesAt(base);
  const diff = compare(before, model.frames);
  mark("added", diff.added);
  mark("changed", diff.changed);
  const tx = model.transactions.find((t) => t.committed_version === target);
  const back = el("button", { type: "button", text: "back to now" });
  back.addEventListener("click", () => travel(model.context.version));
  banner.append(
    el("b", { text: model.asOf === null ? "Now (version " + target + ")" : "Viewing version " + target + " (read-only)" }),
    " · compared with version " + base + ": ",
    el("span", { class: "tt-added", text: diff.added.length + " new" }), ", ",
    el("span", { class: "tt-changed", text: diff.changed.length + " changed" }),
    tx ? el("span", { class: "muted", text: " · version " + target + " was written by " + tx.author + (tx.reason ? ": " + tx.reason : "") }) : null,
    " ", back);
  const ids = [...diff.added, ...diff.changed];
  if (ids.length) {
    const list = el("ul", { class: "tt-list" });
    for (const id of ids.slice(0, 12)) {
      const item = el("button", { type: "button", class: "ref", text: describe(id, before, model.frames) });
      item.addEventListener("click", () => emit("select-frame", id));
      list.append(el("li", {}, item));
    }
    if (ids.length > 12) list.append(el("li", { class: "muted", text: "and " + (ids.length - 12) + " more" }));
    banner.append(list);
  }
}

slider.addEventListener("input", () => {
  $("tt-value").textContent = slider.value === slider.max ? "now (" + slider.max + ")" : slider.value;
});
slider.addEventListener("change", () => travel(Number(slider.value)));
