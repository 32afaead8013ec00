/* Live updates (R39): the server sends a small change notice over a websocket after each
 * commit; the page re-reads what the notice names through the REST API. Notices arriving
 * together fold into one re-read, never two at once; what arrives during one starts another. */

import { page } from "./api.js";
import { $, emit } from "./dom.js";
import {
  loadFrameDetail, refreshAll, refreshContext, refreshEvents, refreshFrames, refreshRelations, refreshTransactions,
} from "./model.js";

const pending = { frames: new Set(), context: false, relations: false, events: false, transactions: false, all: false };
let refreshing = false;
let selectedId = () => null;

function noteChange(change) {
  pending.context = true;
  if (change.type === "transaction") {
    for (const id of change.frames || []) pending.frames.add(id);
    pending.relations = pending.events = pending.transactions = true;
  } else if (change.type === "tick") {
    for (const id of change.expired || []) pending.frames.add(id);
    pending.events = true;
    emit("tick", change);
  } else if (change.type === "event") {
    pending.events = true;
  } else {
    pending.all = true;
  }
  runRefresh();
}

async function runRefresh() {
  if (refreshing) return;
  refreshing = true;
  try {
    while (pending.context || pending.all) {
      const job = Object.assign({}, pending, { frames: [...pending.frames] });
      pending.frames.clear();
      pending.context = pending.relations = pending.events = pending.transactions = pending.all = false;
      if (job.all) {
        await refreshAll(selectedId());
      } else {
        await refreshContext();
        const tasks = [];
        if (job.frames.length) tasks.push(refreshFrames(job.frames));
        if (job.relations) tasks.push(refreshRelations());
        if (job.events) tasks.push(refreshEvents());
        if (job.transactions) tasks.push(refreshTransactions());
        await Promise.all(tasks);
        const selected = selectedId();
        if (selected && job.relations && !job.frames.includes(selected)) await loadFrameDetail(selected);
      }
      emit("refreshed");
    }
  } catch (err) {
    console.error("refresh failed", err);
    pending.all = true;
    setTimeout(runRefresh, 2000);
  } finally {
    refreshing = false;
  }
}

function setLive(state, text) {
  const badge = $("live-status");
  badge.dataset.state = state;
  badge.textContent = text;
}

let retryDelay = 500;
function connect() {
  const scheme = location.protocol === "https:" ? "wss://" : "ws://";
  const socket = new WebSocket(scheme + location.host + page.ws);
  let opened = false;
  socket.addEventListener("open", () => {
    if (retryDelay > 500) noteChange({ type: "reconnect" }); // catch up on what was missed
    opened = true;
    retryDelay = 500;
    setLive("live", "live");
  });
  socket.addEventListener("message", (msg) => {
    let change;
    try {
      change = JSON.parse(msg.data);
    } catch (e) {
      return;
    }
    // Other scripts (tests, benchmarks) may listen for the moment a change arrived.
    document.dispatchEvent(new CustomEvent("morphz:change", { detail: change }));
    noteChange(change);
  });
  socket.addEventListener("close", (evt) => {
    const refused = evt.code === 4401 || evt.code === 4404;
    setLive("offline", refused ? "not allowed" : "offline, reconnecting…");
    if (refused) return;
    retryDelay = opened ? 1000 : Math.min(retryDelay * 2, 15000);
    setTimeout(connect, retryDelay);
  });
}

export function startLive(selected) {
  selectedId = selected;
  connect();
}
