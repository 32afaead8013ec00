/* Search over frames and events (the API's lexical index); hits light up in the graph. */

import { api } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { mark } from "./graph.js";

const box = $("search-results");

function close() {
  box.hidden = true;
  mark("hit", []);
}

/* The API marks matches as parts ({text, match}); each part becomes a text node or a
 * <mark> built here, so the snippet itself is only ever text. */
function snippetNode(hit) {
  const span = el("span");
  for (const part of hit.snippet_parts) {
    span.append(part.match ? el("mark", { text: part.text }) : document.createTextNode(part.text));
  }
  return span;
}

function render(data, q) {
  clear(box);
  const hits = data.hits;
  const closeButton = el("button", { type: "button", text: "close" });
  closeButton.addEventListener("click", close);
  const count = typeof data.total === "number" && data.total > hits.length
    ? hits.length + " of " + data.total + " hits" : hits.length + (hits.length === 1 ? " hit" : " hits");
  box.append(el("div", { class: "search-head" }, el("b", { text: count + " for " + q }), " ", closeButton));
  const lag = data.lag || {};
  if (lag.pending_intents) {
    box.append(el("div", { class: "muted", text: "the index is catching up: " + lag.pending_intents +
      " changes pending (" + Math.round(lag.oldest_pending_seconds || 0) + " s)" }));
  }
  if (!hits.length) box.append(el("p", { class: "muted", text: "Nothing matches every word. Search looks at frame ids and bodies and at event texts." }));
  const list = el("ul");
  for (const hit of hits) {
    const isEvent = hit.type === "event";
    const item = el("li", { "data-ref": hit.ref },
      el("b", { text: hit.ref }), " ",
      el("span", { class: "tag", text: isEvent ? hit.kind : "frame" }), " ",
      hit.status ? el("span", { class: "tag " + hit.status, text: hit.status }) : null,
      el("div", {}, snippetNode(hit)));
    item.addEventListener("click", () => emit(isEvent ? "open-event" : "select-frame", hit.ref));
    list.append(item);
  }
  box.append(list);
  mark("hit", hits.filter((h) => h.type === "frame").map((h) => h.ref));
}

$("search-form").addEventListener("submit", async (evt) => {
  evt.preventDefault();
  const q = $("search-input").value.trim();
  if (!q) {
    close();
    return;
  }
  clear(box).append(el("p", { class: "muted", text: "searching…" }));
  box.hidden = false;
  try {
    render(await api("search/?q=" + encodeURIComponent(q)), q);
  } catch (err) {
    clear(box).append(el("p", { class: "error", text: "search failed: " + err.message }));
  }
});
