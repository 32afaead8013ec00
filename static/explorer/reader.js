/* The event reader: an event's text read in chunks (a 4 MB log is never loaded whole). */

import { api } from "./api.js";
import { $, eventSeq } from "./dom.js";

const READ_CHUNK = 4096;
let current = null; // {seq, offset}

export async function openReader(ref) {
  current = { seq: eventSeq(ref), offset: 0 };
  $("reader-title").textContent = ref;
  $("reader-meta").textContent = "";
  $("reader-text").textContent = "";
  $("reader-progress").textContent = "";
  const dialog = $("event-reader");
  if (!dialog.open) dialog.showModal();
  await readMore();
}

async function readMore() {
  const reader = current;
  if (!reader || reader.offset === null) return;
  try {
    const chunk = await api("events/" + reader.seq + "/?offset=" + reader.offset + "&length=" + READ_CHUNK);
    if (current !== reader) return;
    $("reader-meta").textContent =
      chunk.kind + " · " + (chunk.status || "recorded") + " · thread " + chunk.thread + " · " + chunk.size + " characters" +
      (chunk.erased || []).map((t) => " · erased " + t.erased_at.slice(0, 16) + " by " + t.erased_by + ": " + t.reason).join("");
    $("reader-text").append(document.createTextNode(chunk.content));
    reader.offset = chunk.next_offset;
    const shown = reader.offset === null ? chunk.size : reader.offset;
    $("reader-progress").textContent = "showing " + shown + " of " + chunk.size + " characters";
    $("reader-more").hidden = reader.offset === null;
  } catch (err) {
    $("reader-progress").textContent = "could not read: " + err.message;
  }
}

/* Erasure (R64): asks for the reason, then for a confirmation, then POSTs erasures/. */
async function eraseCurrent() {
  const reader = current;
  if (!reader) return;
  const ref = "@e" + reader.seq;
  const reason = window.prompt("Erase " + ref + " from all history, in every fork too? Why (kept in the tombstone):");
  if (!reason || !reason.trim()) return;
  if (!window.confirm("Erase " + ref + "? Its text is masked everywhere; this cannot be undone.")) return;
  try {
    const result = await api("erasures/", { method: "POST", body: { refs: [ref], reason: reason } });
    const places = Object.values(result.contexts).reduce((a, b) => a + b, 0);
    await openReader(ref);
    $("reader-progress").textContent = "erased: " + places + " place(s) masked";
  } catch (err) {
    $("reader-progress").textContent = "not erased: " + err.message;
  }
}

$("reader-more").addEventListener("click", readMore);
$("reader-erase").addEventListener("click", eraseCurrent);
