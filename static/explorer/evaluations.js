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

/* The compiled text with each frame id and event ref made a link; the rest stays text. */
function linkedText(text) {
  const pre = el("pre", { class: "model-input", id: "evaluation-text" });
  for (const line of text.split("\n")) {
    const frame = /^\[frame (\S+) /.exec(line);
    const event = /^\[(@e[1-9][0-9]*) /.exec(line);
    const match = frame || event;
    if (match) {
      const start = line.indexOf(match[1]);
      const link = el("button", { type: "button", class: "ref", text: match[1], "data-ref": match[1] });
      link.addEventListener("click", () => {
        $("evaluation-dialog").close();
        emit(frame ? "select-frame" : "open-event", match[1]);
      });
      pre.append(line.slice(0, start), link, line.slice(start + match[1].length) + "\n");
    } else {
      pre.append(line + "\n");
    }
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
      linkedText(e.input.text || ""));
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

