/* Time travel: the graph and the side panel as of an earlier version (the API's as_of
 * reads), with what changed since the version before it (or any other version picked to
 * compare with) highlighted, as the server's diff/ endpoint reports it. Corrections are off
 * while looking at the past. */

import { api } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { mark } from "./graph.js";
import { model, refreshAll } from "./model.js";
import { selection } from "./frame.js";

const slider = $("tt-slider");
const banner = $("tt-banner");

/* The highlight of a diff/ answer: frames derived in the range ("added"), and frames that
 * existed and were revised, changed status or protection ("changed"), each with a line
 * saying what happened to it. */
export function highlight(diff) {
  const lines = new Map();
  const note = (id, text) => lines.set(id, lines.has(id) ? lines.get(id) + ", " + text : text);
  const f = diff.frames;
  const added = f.derived.map((d) => d.id);
  for (const d of f.derived) note(d.id, "new");
  for (const r of f.revised) note(r.id, "revision " + r.from_revision + " → " + r.to_revision);
  for (const kind of ["retiring", "retired", "restored"]) {
    for (const c of f[kind]) if (c.before !== null) note(c.id, c.before + " → " + c.after);
  }
  for (const p of f.protected) note(p.id, "protected");
  for (const p of f.unprotected) note(p.id, "unprotected");
  const isNew = new Set(added);
  const changed = [...lines.keys()].filter((id) => !isNew.has(id));
  return { added, changed, lines };
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
  const low = Math.min(base, target);
  const high = Math.max(base, target);
  let diff;
  try {
    diff = await api("diff/?from=" + low + "&to=" + high);
  } catch (err) {
    mark("added", []);
    mark("changed", []);
    banner.append(el("span", { class: "error", text: "Could not compare with version " + base + ": " + err.message }));
    banner.hidden = false;
    return;
  }
  const shown = highlight(diff);
  mark("added", shown.added);
  mark("changed", shown.changed);
  const back = el("button", { type: "button", text: "back to now" });
  back.addEventListener("click", () => travel(model.context.version));
  const rel = diff.relations;
  banner.append(
    el("b", { text: model.asOf === null ? "Now (version " + target + ")" : "Viewing version " + target + " (read-only)" }),
    " · " + (base <= target ? "changes since version " + base : "changes from version " + target + " to " + base) + ": ",
    el("span", { class: "tt-added", text: shown.added.length + " new" }), ", ",
    el("span", { class: "tt-changed", text: shown.changed.length + " changed" }),
    rel.added.length || rel.removed.length
      ? el("span", { class: "muted", text: " · relations +" + rel.added.length + " −" + rel.removed.length })
      : null,
    " ", back);
  const txs = diff.transactions;
  if (txs.length) {
    const list = el("ul", { class: "tt-transactions" });
    for (const t of txs.slice(-5)) {
      list.append(el("li", { class: "muted", text: "version " + t.version + " by " + t.author + (t.reason ? ": " + t.reason : "") }));
    }
    if (txs.length > 5) list.prepend(el("li", { class: "muted", text: (txs.length - 5) + " earlier transactions" }));
    banner.append(list);
  }
  const ids = [...shown.added, ...shown.changed];
  if (ids.length) {
    const list = el("ul", { class: "tt-list" });
    for (const id of ids.slice(0, 12)) {
      const item = el("button", { type: "button", class: "ref", text: id + " (" + shown.lines.get(id) + ")" });
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
