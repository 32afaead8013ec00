/* The status bar and the panels under the graph: retirement, transactions, events. */

import { $, el, clear, emit, isEventRef } from "./dom.js";
import { api } from "./api.js";
import { model, refreshEvents, ticksLeft } from "./model.js";

const LEVEL_HELP = {
  ok: "ok: the active context fits comfortably in the model's budget.",
  pressure: "pressure: the active context is getting large; the agent should digest observations and slim frames.",
  maintenance: "maintenance: the active context is nearly full. New external actions are refused " +
    "until the agent digests observations, slims frames or retires them and usage falls below the exit threshold. " +
    "Transactions, recall and search still work.",
};

export function refButton(ref) {
  const button = el("button", { type: "button", class: "ref", text: ref });
  button.addEventListener("click", () => emit(isEventRef(ref) ? "open-event" : "select-frame", ref));
  return button;
}

export function renderStatus() {
  const ctx = model.context;
  $("ctx-version").textContent = String(ctx.version);
  $("ctx-tick").textContent = String(ctx.tick);
  const p = ctx.pressure || {};
  const level = p.level || "ok";
  const percent = typeof p.percent === "number" ? p.percent : 0;
  $("pressure-gauge").dataset.level = level;
  $("pressure-gauge").title = LEVEL_HELP[level] || level;
  $("pressure-fill").style.width = Math.min(100, percent) + "%";
  $("pressure-text").textContent =
    level + " · " + (p.used_tokens || 0) + " / " + (p.capacity_tokens || 0) + " tokens (" + percent + "%)";
  const note = $("maintenance-note");
  note.hidden = level !== "maintenance";
  note.textContent = level === "maintenance" ? LEVEL_HELP.maintenance : "";
}

function renderRetirement() {
  const rows = clear($("retirement-rows"));
  const retiring = [...model.frames.values()]
    .filter((f) => f.status === "retiring" && f.retire)
    .sort((a, b) => a.retire.due_tick - b.retire.due_tick);
  for (const frame of retiring) {
    rows.append(
      el("tr", { "data-frame": frame.id },
        el("td", {}, refButton(frame.id)),
        el("td", { text: frame.retire.reason || "" }),
        el("td", { text: String(frame.retire.due_tick) }),
        el("td", { class: "ticks-left", text: String(ticksLeft(frame)) }))
    );
  }
  $("retirement-empty").hidden = retiring.length > 0;
}

function renderTransactions() {
  const list = clear($("transactions"));
  for (const tx of [...model.transactions].reverse()) {
    const head = el("summary", {},
      tx.status === "committed" ? "version " + tx.committed_version : "rejected",
      " · from " + (tx.base_version === null ? "latest" : "version " + tx.base_version) + " · ",
      el("span", { class: "muted", text: tx.author }),
      tx.reason ? " · " + tx.reason : "");
    const body = el("details", {}, head, el("pre", { text: tx.text }));
    if (tx.errors) body.append(el("pre", { text: JSON.stringify(tx.errors, null, 2) }));
    list.append(el("li", { class: tx.status, "data-tx": String(tx.id) }, body));
  }
  $("transactions-empty").hidden = model.transactions.length > 0;
}

/* A pending action a person cancels (R59): the cancellation is a tool result delivering
 * it, which the model reads with the reason. */
function cancelButton(ref) {
  const button = el("button", { type: "button", class: "cancel-action", text: "cancel" });
  button.addEventListener("click", async () => {
    const reason = window.prompt("Cancel " + ref + ": why? (the model reads this)", "");
    if (reason === null) return;
    button.disabled = true;
    try {
      await api("actions/" + ref.slice(2) + "/cancel/", { method: "POST", body: { reason: reason || null } });
      await refreshEvents();
      emit("refreshed");
    } catch (err) {
      button.disabled = false;
      button.title = err.code + ": " + err.message;
    }
  });
  return button;
}

function renderEvents() {
  const list = clear($("events"));
  for (const ref of [...model.stream].reverse()) {
    const e = model.eventInfo.get(ref);
    if (!e) continue;
    list.append(
      el("li", { "data-ref": ref },
        refButton(ref), " ", el("span", { class: "tag", text: e.kind }), " ",
        e.status === "recorded" ? null : el("span", { class: "tag status " + e.status, text: e.status }),
        e.request ? el("span", { class: "tag request " + e.request, text: "request " + e.request }) : null,
        el("span", { class: "muted", text: " " + e.thread + " · " + e.size + " chars" }),
        e.kind === "action" && e.request === "open" ? cancelButton(ref) : null,
        el("span", { class: "preview", text: (e.preview || "").slice(0, 200) }))
    );
  }
  $("events-empty").hidden = model.stream.length > 0;
}

export function renderPanels() {
  renderStatus();
  renderRetirement();
  renderTransactions();
  renderEvents();
  document.body.dataset.version = String(model.context.version);
  document.body.dataset.tick = String(model.context.tick);
}
