/* Search over frames and events (the API's ranked index); hits light up in the graph.
 *
 * The panel shows how many documents matched in all, filters (frames / events, a thread,
 * transaction events) that search again from the first page, and "more", which asks for
 * the next page with the API's `next_cursor` and adds it below (every match, past 1,000,
 * with no repeats while new events arrive; once: while a page loads the button is
 * disabled, and a page already shown is never added again). A hit indexed in parts (a huge
 * event) says so, and a reply found through words of the turn it answers names that turn.
 * A failed search says
 * why in the panel's status line and keeps the filters, so a bad filter can be corrected. */

import { api } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { mark } from "./graph.js";

const PAGE = 20;
const box = $("search-results");

/* What is being searched: the query, the filters, the hits shown so far and the cursors of
 * the pages they came from ("" for the first), the last answer (null while the first page loads or after a
 * failure), the failure's message and field, whether a request is on its way, and the
 * number of the newest request (an answer to an older one is dropped). */
const state = {
  q: "", type: "", thread: "", transactions: false,
  hits: [], pages: new Set(), data: null, error: "", errorField: "", loading: false, seq: 0,
};

function close() {
  box.hidden = true;
  state.seq += 1;
  state.loading = false;
  state.hits = [];
  mark("hit", []);
}

function queryString(cursor) {
  const params = new URLSearchParams({ q: state.q, limit: String(PAGE) });
  if (cursor) params.set("cursor", cursor);
  if (state.type) params.set("type", state.type);
  if (state.thread) params.set("thread", state.thread);
  if (state.transactions) params.set("transactions", "true");
  return "search/?" + params.toString();
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

function hitItem(hit) {
  const isEvent = hit.type === "event";
  const item = el("li", { "data-ref": hit.ref },
    el("b", { text: hit.ref }), " ",
    el("span", { class: "tag", text: isEvent ? hit.kind : "frame" }), " ",
    hit.status ? el("span", { class: "tag " + hit.status, text: hit.status }) : null,
    hit.thread && hit.thread !== "main" ? el("span", { class: "muted", text: " thread " + hit.thread }) : null,
    hit.answers ? el("span", { class: "muted answers", text: " answers " + hit.answers,
      title: "Found through words of the turn it answers (" + hit.coverage.borrowed.join(", ") + "): read that turn for what was said." }) : null,
    hit.index_parts ? el("span", { class: "muted index-parts", text: " indexed in " + hit.index_parts + " parts",
      title: "Too many distinct words for one index entry: every word is still found, a phrase only within a part." }) : null,
    el("div", {}, snippetNode(hit)));
  item.addEventListener("click", () => emit(isEvent ? "open-event" : "select-frame", hit.ref));
  return item;
}

function countText(data) {
  const shown = state.hits.length;
  const total = data.total + (data.total_exact ? "" : "+");
  const noun = data.total === 1 && data.total_exact ? " result" : " results";
  return shown < data.total ? total + noun + " (showing " + shown + ")" : total + noun;
}

function filtersNode() {
  const type = el("select", { id: "search-type", "aria-label": "search in" },
    el("option", { value: "", text: "frames and events" }),
    el("option", { value: "frame", text: "frames" }),
    el("option", { value: "event", text: "events" }));
  type.value = state.type;
  type.addEventListener("change", () => { state.type = type.value; run(); });
  const thread = el("input", { id: "search-thread", type: "text", placeholder: "any thread", value: state.thread, "aria-label": "thread",
    "aria-invalid": String(state.errorField === "thread") });
  thread.size = 10;
  thread.addEventListener("change", () => { state.thread = thread.value.trim(); run(); });
  const transactions = el("input", { id: "search-transactions", type: "checkbox", checked: state.transactions });
  transactions.addEventListener("change", () => { state.transactions = transactions.checked; run(); });
  return el("div", { class: "search-filters" }, type, " ", thread, " ",
    el("label", { title: "Transaction events echo the frames they wrote; they are left out unless asked for." },
      transactions, " transactions"));
}

function headText() {
  if (state.error) return "search failed";
  return state.data ? countText(state.data) : "searching…";
}

function moreButton(data) {
  const more = el("button", { type: "button", id: "search-more", text: state.loading ? "loading…" : "more", disabled: state.loading });
  more.addEventListener("click", () => run(data.next_cursor));
  return more;
}

/* The filters are built once and stay in place while searches come and go, so what a
 * person is typing into them is never replaced by a re-render (only their error mark is
 * updated); the head and the results around them are rebuilt. */
let slots = null;

function layout() {
  if (!slots || !box.contains(slots.filters)) {
    clear(box);
    slots = { head: el("div", { class: "search-head" }), filters: filtersNode(), body: el("div") };
    box.append(slots.head, slots.filters, slots.body);
  }
  $("search-thread").setAttribute("aria-invalid", String(state.errorField === "thread"));
  return slots;
}

function render() {
  const data = state.data;
  const { head, body } = layout();
  clear(head);
  clear(body);
  const closeButton = el("button", { type: "button", text: "close" });
  closeButton.addEventListener("click", close);
  head.append(el("b", { id: "search-count", text: headText() }), " for ", el("i", { text: state.q }), " ", closeButton);
  body.append(el("p", { id: "search-status", role: "status", class: state.error ? "error" : "muted",
    text: state.error, hidden: !state.error }));
  if (!data) return;
  const lag = data.lag || {};
  if (lag.pending_intents) {
    body.append(el("div", { class: "muted", text: "the index is catching up: " + lag.pending_intents +
      " changes pending (" + Math.round(lag.oldest_pending_seconds || 0) + " s)" }));
  }
  if (!state.hits.length) {
    body.append(el("p", { class: "muted", text: "Nothing matches. Search looks at frame ids and bodies and at event texts; try other words or fewer filters." }));
  }
  const list = el("ul", { id: "search-hits" });
  for (const hit of state.hits) list.append(hitItem(hit));
  body.append(list);
  if (data.next_cursor) body.append(moreButton(data));
  mark("hit", state.hits.filter((h) => h.type === "frame").map((h) => h.ref));
}

/* Search from the first page (no cursor) or add the page at `cursor` to what is shown. A
 * page is asked for once: not while another loads, and never when it is already shown. */
async function run(cursor = "") {
  if (cursor && (state.loading || state.pages.has(cursor))) return;
  const seq = ++state.seq;
  state.loading = true;
  state.error = "";
  state.errorField = "";
  if (!cursor) {
    state.hits = [];
    state.pages = new Set();
    state.data = null;
    box.hidden = false;
  }
  render();
  try {
    const data = await api(queryString(cursor));
    if (seq !== state.seq) return; // a newer search replaced this one
    state.pages.add(cursor);
    state.hits = state.hits.concat(data.hits);
    state.data = data;
  } catch (err) {
    if (seq !== state.seq) return;
    state.error = "search failed: " + err.message;
    const fields = (err.details || []).map((d) => d && d.field).filter(Boolean);
    state.errorField = fields.length ? String(fields[0]) : "";
    if (!cursor) mark("hit", []);
  } finally {
    if (seq === state.seq) {
      state.loading = false;
      render();
    }
  }
}

$("search-form").addEventListener("submit", (evt) => {
  evt.preventDefault();
  const q = $("search-input").value.trim();
  if (!q) {
    close();
    return;
  }
  state.q = q;
  run();
});
