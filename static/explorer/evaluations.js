/* "What the model saw": every evaluation (one model call) with its tick, the version its
 * input showed, the events it claimed and its size; one opens to the compiled input exactly
 * as the model received it, its frames and events linked to the graph and the reader. */

import { api, fetchAll } from "./api.js";
import { $, el, clear, emit } from "./dom.js";
import { mark } from "./graph.js";

let evaluations = []; // oldest first

export async function refreshEvaluations() {
  evaluations = await fetchAll("evaluations/?limit=200", "evaluations");
}

function summary(e) {
  const parts = ["tick " + e.tick, "saw version " + e.view_version];
  if (e.tokens !== null && e.tokens !== undefined) parts.push(e.tokens + " tokens");
  if (e.thread && e.thread !== "main") parts.push("thread " + e.thread);
  if (e.continuation) parts.push("continuation");
  return parts.join(" · ");
}

export function renderEvaluations() {
  const list = clear($("evaluations"));
  for (const e of [...evaluations].reverse()) {
    const open = el("button", { type: "button", class: "ref", text: "#" + e.id });
    open.addEventListener("click", () => openEvaluation(e.id));
    const claimed = e.claimed.length ? " · claimed " + e.claimed.join(" ") : " · claimed nothing new";
    list.append(el("li", { "data-evaluation": String(e.id) }, open, " " + summary(e), el("span", { class: "muted", text: claimed })));
  }
  $("evaluations-empty").hidden = evaluations.length > 0;
}

/* The compiled text with its frame ids and event refs made links; the rest stays text.
 * Linked: every event ref in a header line (`[@e42 ...]`, `[frame x ...] (from @e42 y)`,
 * `delivers @e7`), the frame id and frame sources of a frame's header, and both ends of a
 * line under "## relations". Text inside observations and bodies stays text: a word there
 * that happens to equal a frame id is not one. */
const REF = /@e[1-9][0-9]*/g;

function refLink(ref, isFrame) {
  const link = el("button", { type: "button", class: "ref", text: ref, "data-ref": ref });
  link.addEventListener("click", () => {
    $("evaluation-dialog").close();
    emit(isFrame ? "select-frame" : "open-event", ref);
  });
  return link;
}

function linkSpans(line, section, frameIds) {
  const spans = []; // [start, end, isFrame]
  if (line.startsWith("[")) {
    const frame = /^\[frame (\S+) /.exec(line);
    if (frame) spans.push([7, 7 + frame[1].length, true]);
    for (const m of line.matchAll(REF)) spans.push([m.index, m.index + m[0].length, false]);
    const from = line.lastIndexOf("] (from ");
    if (frame && from >= 0) {
      for (const m of line.slice(from).matchAll(/[a-z0-9][a-z0-9._-]*/g)) {
        if (frameIds.has(m[0]) && m[0] !== "from") spans.push([from + m.index, from + m.index + m[0].length, true]);
      }
    }
  } else if (section === "## relations") {
    const m = /^(\S+) \S+ (\S+)$/.exec(line);
    if (m && frameIds.has(m[1]) && frameIds.has(m[2])) {
      spans.push([0, m[1].length, true], [line.length - m[2].length, line.length, true]);
    }
  }
  return spans.sort((a, b) => a[0] - b[0]);
}

function linkedText(text, frameIds) {
  const pre = el("pre", { class: "model-input", id: "evaluation-text" });
  let section = "";
  for (const line of text.split("\n")) {
    if (line.startsWith("## ")) section = line.trim();
    let at = 0;
    for (const [start, end, isFrame] of linkSpans(line, section, frameIds)) {
      if (start < at) continue;
      pre.append(line.slice(at, start), refLink(line.slice(start, end), isFrame));
      at = end;
    }
    pre.append(line.slice(at) + "\n");
  }
  return pre;
}

export async function openEvaluation(id) {
  const dialog = $("evaluation-dialog");
  const body = clear($("evaluation-body"));
  $("evaluation-title").textContent = "What the model saw: evaluation #" + id;
  body.append(el("p", { class: "muted", text: "loading…" }));
  if (!dialog.open) dialog.showModal();
  try {
    const e = await api("evaluations/" + id + "/");
    clear(body);
    body.append(
      el("p", {}, summary(e) + (e.advanced_tick ? " · advanced the tick" : "") +
        (e.expired.length ? " · retired at this tick: " + e.expired.join(" ") : "")),
      el("p", { class: "muted", text: e.frames_seen.length + " frames and " + e.observations_seen.length +
        " observations were in the input. Frame ids and event refs below open them." }),
      linkedText(e.input.text || "", new Set(e.frames_seen.map((f) => f.id))));
    const seen = e.frames_seen.map((f) => f.id);
    const show = el("button", { type: "button", text: "mark these frames in the graph" });
    show.addEventListener("click", () => {
      mark("seen", seen);
      dialog.close();
    });
    body.append(show);
  } catch (err) {
    clear(body).append(el("p", { class: "error", text: "could not read the evaluation: " + err.message }));
  }
}

