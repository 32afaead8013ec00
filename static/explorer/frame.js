/* The side panel: one frame's body, sources, relations and write history, and a person's
 * corrections (retire, restore, protect, unprotect, relate, unrelate), each an ordinary
 * transaction through the REST API (R40). */

import { api, ApiError, page } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { model, ticksLeft, loadFrameDetail, refreshAll } from "./model.js";
import { refButton } from "./panels.js";

export const selection = { id: null };

function bodyTree(value) {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    const dl = el("dl");
    for (const [key, item] of Object.entries(value)) dl.append(el("dt", { text: key }), el("dd", {}, bodyTree(item)));
    return dl;
  }
  if (Array.isArray(value)) {
    const ul = el("ul");
    for (const item of value) ul.append(el("li", {}, bodyTree(item)));
    return ul;
  }
  return el("span", { text: String(value) });
}

export async function selectFrame(id) {
  if (!model.frames.has(id)) return;
  if (selection.id !== id) {
    emit("frame-leaving", selection.id);
    showResult(null);
    $("action-reason").value = "";
    $("side-panel").scrollTop = 0;
  }
  selection.id = id;
  emit("frame-selected", id);
  renderSide();
  try {
    await loadFrameDetail(id);
    if (selection.id === id) renderSide();
  } catch (err) {
    if (selection.id === id) showResult(err);
  }
}

export function renderSide() {
  const id = selection.id;
  const frame = id && model.frames.get(id);
  $("side-empty").hidden = !!frame;
  $("frame-detail").hidden = !frame;
  if (!frame) return;
  $("frame-title").textContent = frame.id;
  const badges = clear($("frame-badges"));
  badges.append(
    el("span", { class: "status-" + frame.status, id: "frame-status", text: frame.status,
      title: "active: in the model's input; retiring: still shown, leaves after its grace window; retired: kept in history only" }),
    el("span", { id: "frame-revision", text: "revision " + frame.revision, title: "revision 1 is the first body; each revise adds one" })
  );
  if (frame.protected) badges.append(el("span", { class: "protected", text: "protected", title: "protected frames are never retired, not even by a successor" }));
  const retire = $("frame-retire");
  retire.hidden = !frame.retire;
  if (frame.retire) {
    retire.textContent =
      "retiring: " + (frame.retire.reason || "(no reason)") + " — due at tick " +
      frame.retire.due_tick + ", " + ticksLeft(frame) + " ticks left";
  }
  clear($("frame-body")).append(bodyTree(frame.body));
  const sources = clear($("frame-sources"));
  for (const ref of frame.sources) sources.append(el("li", {}, refButton(ref)));
  if (!frame.sources.length) sources.append(el("li", { class: "muted", text: "none: the model wrote it without citing anything" }));
  renderRelations(frame);
  $("relate-subject").textContent = frame.id;
  $("btn-retire").hidden = frame.status !== "active" || frame.protected;
  $("btn-restore").hidden = frame.status === "active";
  $("btn-protect").hidden = frame.protected || frame.status === "retired";
  $("btn-unprotect").hidden = !frame.protected;
  renderHistory();
  emit("side-rendered", frame);
}

function renderRelations(frame) {
  const list = clear($("frame-relations"));
  const mine = model.relations.filter((r) => r.subject === frame.id || r.object === frame.id);
  for (const rel of mine) {
    const unrelate = el("button", { type: "button", class: "unrelate", text: "unrelate" });
    unrelate.addEventListener("click", () => {
      const sentence = rel.subject + " " + rel.name + " " + rel.object;
      if (!window.confirm("Remove the relation “" + sentence + "”? It stays in the history.")) return;
      submitOps([{ op: "unrelate", subject: rel.subject, name: rel.name, object: rel.object }], "unrelate");
    });
    list.append(el("li", {}, refButton(rel.subject), " " + rel.name + " ", refButton(rel.object), unrelate));
  }
  if (!mine.length) list.append(el("li", { class: "muted", text: "none" }));
}

function renderHistory() {
  const list = clear($("frame-history"));
  const detail = model.details.get(selection.id);
  if (!detail) {
    list.append(el("li", { class: "muted", text: "loading…" }));
    return;
  }
  for (const entry of [...(detail.write_history || [])].reverse()) {
    list.append(
      el("li", { "data-revision": String(entry.revision) },
        el("b", { text: "revision " + entry.revision }),
        " · " + entry.op + " in version " + entry.version + " (written against " + entry.base_version + ") · ",
        el("span", { class: "muted", text: entry.author }),
        el("pre", { text: entry.text }))
    );
  }
}

// ---------------------------------------------------------------- corrections
export function reasonText(fallback) {
  const typed = $("action-reason").value.trim();
  return typed || fallback + " (by " + page.user + " in the explorer)";
}

export function showResult(outcome) {
  const box = clear($("action-result"));
  box.className = "result";
  delete box.dataset.code;
  if (!outcome) return;
  if (!(outcome instanceof Error)) {
    box.append("Committed as version " + outcome.version + ".");
    return;
  }
  box.classList.add(outcome.code === "conflict" ? "conflict" : "error");
  box.dataset.code = outcome.code;
  const title = outcome.code === "conflict"
    ? "Conflict: this changed since the version you edited. Nothing was written."
    : "Not saved (" + outcome.code + ")";
  box.append(el("b", { text: title }), el("div", { class: "message", text: outcome.message }));
  // The message often already says what a detail says; show each thing once.
  const details = outcome.details
    .filter((d) => !(d && typeof d.message === "string" && outcome.message.includes(d.message)))
    .filter((d) => !(d && d.line !== undefined && outcome.message.includes("line " + d.line + ", column " + d.column)))
    .map(describeDetail);
  if (details.length) {
    const list = el("ul", { class: "details" });
    for (const text of details) list.append(el("li", { text }));
    box.append(list);
  }
  if (outcome.code === "conflict") {
    const reload = el("button", { type: "button", text: "re-read and edit again" });
    reload.addEventListener("click", () => emit("conflict-reload"));
    box.append(reload);
  }
}

function describeDetail(d) {
  if (d === null || typeof d !== "object") return String(d);
  if (d.ref !== undefined && (d.changed_version !== undefined || d.revision !== undefined)) {
    let text = d.ref + " (" + (d.kind || "item") + ") changed in version " + d.changed_version;
    if (d.revision) text += ", now revision " + d.revision;
    if (d.status) text += ", " + d.status;
    return text;
  }
  if (d.line !== undefined) return "line " + d.line + ", column " + d.column + ": expected " + d.expected;
  if (d.index !== undefined) return "operation " + (d.index + 1) + " (" + d.op + "): " + d.message;
  return JSON.stringify(d);
}

/* Send one transaction (to `path`, the transactions endpoint unless told); on success the reason box is emptied, so the next correction never
 * carries this one's reason into the audit trail. */
export async function submit(payload, busyButton, path = "transactions/") {
  if (busyButton) busyButton.disabled = true;
  try {
    const receipt = await api(path, { method: "POST", body: payload });
    $("action-reason").value = "";
    showResult(receipt);
    await refreshAll(selection.id);
    emit("refreshed");
    return receipt;
  } catch (err) {
    showResult(err instanceof ApiError ? err : new ApiError(0, { error: { message: String(err) } }));
    return null;
  } finally {
    if (busyButton) busyButton.disabled = false;
  }
}

function submitOps(ops, what, busyButton) {
  return submit({ base_version: model.context.version, reason: reasonText(what), ops }, busyButton);
}

for (const id of ["btn-retire", "btn-restore", "btn-protect", "btn-unprotect"]) {
  const button = $(id);
  button.addEventListener("click", () => {
    const op = button.dataset.op;
    const frame = selection.id;
    if (!frame) return;
    submitOps([op === "retire" ? { op, refs: [frame] } : { op, ids: [frame] }], op, button);
  });
}

$("relate-form").addEventListener("submit", async (evt) => {
  evt.preventDefault();
  const name = $("relate-name").value.trim();
  const object = $("relate-object").value.trim();
  if (!selection.id || !name || !object) return;
  const ok = await submitOps([{ op: "relate", subject: selection.id, name, object }], "relate");
  if (ok) $("relate-name").value = $("relate-object").value = "";
});

export function renderFrameIds() {
  const list = clear($("frame-ids"));
  for (const id of model.frames.keys()) list.append(el("option", { value: id }));
}
