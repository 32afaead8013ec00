/* The body editor: revise a frame as JSON or as S-expression fields (only the body is sent,
 * to frames/<id>/body/, which commits one revise of that frame). The fields text comes
 * from the server (the transaction language's own printer), so what a person edits is the
 * canonical form the model writes. */

import { $, emit, on } from "./dom.js";
import { model, loadFrameDetail, refreshAll } from "./model.js";
import { selection, reasonText, showResult, submit } from "./frame.js";

let editing = null; // {frameId, baseVersion, revision}

export async function openEditor(id) {
  const frameId = id || selection.id;
  if (!model.details.has(frameId)) await loadFrameDetail(frameId);
  const frame = model.frames.get(frameId);
  if (!frame) return;
  editing = { frameId, baseVersion: model.context.version, revision: frame.revision };
  $("edit-frame").textContent = frameId;
  $("edit-revision").textContent = String(frame.revision);
  $("edit-base").textContent = String(model.context.version);
  fill();
  $("edit-form").hidden = false;
  renderNotice();
  $("edit-text").focus();
}

function fill() {
  const detail = model.details.get(editing.frameId);
  const frame = model.frames.get(editing.frameId);
  $("edit-text").value = $("edit-mode").value === "json" ? JSON.stringify(frame.body, null, 2) : detail.body_text;
}

export function closeEditor() {
  editing = null;
  $("edit-form").hidden = true;
  $("edit-stale").hidden = true;
}

/* Warn while editing when the frame changed underneath (saving would be a conflict). */
function renderNotice() {
  const notice = $("edit-stale");
  if (!editing || editing.frameId !== selection.id) {
    notice.hidden = true;
    return;
  }
  const now = model.frames.get(editing.frameId);
  const changed = now && now.revision !== editing.revision;
  notice.hidden = !changed;
  if (changed) {
    notice.textContent = editing.frameId + " changed while you were editing (now revision " +
      now.revision + ", " + now.status + "); saving will be refused as a conflict.";
  }
}

$("btn-edit").addEventListener("click", () => openEditor());
$("edit-cancel").addEventListener("click", closeEditor);
$("edit-mode").addEventListener("change", () => editing && fill());
$("edit-form").addEventListener("submit", async (evt) => {
  evt.preventDefault();
  if (!editing) return;
  const ed = editing;
  const reason = reasonText("revise " + ed.frameId);
  // Only the body goes to the server, which reads it as a body alone (S-expression fields
  // or one strict JSON object): the text never becomes part of a transaction's text.
  const payload = {
    base_version: ed.baseVersion,
    reason,
    form: $("edit-mode").value === "json" ? "json" : "fields",
    text: $("edit-text").value,
  };
  const receipt = await submit(payload, $("edit-save"), "frames/" + encodeURIComponent(ed.frameId) + "/body/");
  if (receipt) {
    closeEditor();
    $("side-panel").scrollTop = 0; // back to the frame's title and new body
  }
});

on("frame-leaving", closeEditor);
on("side-rendered", renderNotice);
on("conflict-reload", async () => {
  const id = editing && editing.frameId;
  closeEditor();
  showResult(null);
  await refreshAll(selection.id);
  emit("refreshed");
  if (id) openEditor(id);
});
