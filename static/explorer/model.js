/* What the page knows about the context: filled from the server's first-paint snapshot,
 * then kept current through the REST API. Only this module changes it; the others read it
 * and render. */

import { api, fetchAll } from "./api.js";
import { eventSeq, isEventRef } from "./dom.js";

const STREAM_LIMIT = 80;
const TX_LIMIT = 60;

export const model = {
  context: null,
  frames: new Map(), // id -> frame (REST shape)
  relations: [],
  eventInfo: new Map(), // ref -> event summary (graph leaves and the stream)
  stream: [], // recent event refs, oldest first
  transactions: [], // oldest first
  details: new Map(), // frame id -> detail (revisions, write history, body_text)
  asOf: null, // a past version the graph shows (time travel), or null for now
};

/* Frames and relations are read as of the version being looked at. */
function asOf(sep) {
  return model.asOf === null ? "" : sep + "as_of=" + model.asOf;
}

function setFrames(list) {
  for (const frame of list) model.frames.set(frame.id, frame);
}

function rememberEvents(list) {
  for (const event of list) model.eventInfo.set(event.ref, event);
}

function setStream(list) {
  rememberEvents(list);
  model.stream = list.map((e) => e.ref).sort((a, b) => eventSeq(a) - eventSeq(b)).slice(-STREAM_LIMIT);
}

function rememberTransactions(list) {
  const known = new Set(model.transactions.map((t) => t.id));
  for (const tx of list) if (!known.has(tx.id)) model.transactions.push(tx);
  model.transactions.sort((a, b) => a.id - b.id);
  model.transactions = model.transactions.slice(-TX_LIMIT);
}

export function loadSnapshot(snapshot) {
  model.context = snapshot.context;
  setFrames(snapshot.frames);
  model.relations = snapshot.relations;
  rememberEvents(snapshot.source_events);
  setStream(snapshot.events);
  rememberTransactions(snapshot.transactions);
}

export function ticksLeft(frame) {
  if (!frame.retire) return null;
  return Math.max(0, frame.retire.due_tick - model.context.tick);
}

function withoutHistory(detail) {
  const frame = Object.assign({}, detail);
  delete frame.revisions;
  delete frame.write_history;
  delete frame.body_text;
  return frame;
}

/* One frame with its revisions and write history (kept for the side panel). */
export async function loadFrameDetail(id) {
  try {
    const detail = await api("frames/" + encodeURIComponent(id) + "/" + asOf("?"));
    model.details.set(id, detail);
    setFrames([withoutHistory(detail)]);
    return detail;
  } catch (err) {
    if (err.status !== 404) throw err;
    model.frames.delete(id);
    model.details.delete(id);
    return null;
  }
}

export async function refreshContext() {
  model.context = await api("");
}

export async function refreshFrames(ids) {
  if (!ids) {
    const frames = await fetchAll("frames/?limit=500" + asOf("&"), "frames");
    model.frames = new Map(frames.map((f) => [f.id, f]));
    return;
  }
  await Promise.all(ids.map(loadFrameDetail));
}

export async function refreshRelations() {
  model.relations = await fetchAll("relations/?limit=500" + asOf("&"), "relations");
}

/* The recent window is read whole each time: a transaction retires events and a reply
 * delivers requests that the page already shows, so their statuses change too. */
export async function refreshEvents() {
  const after = Math.max(0, (model.context.last_seq || 0) - STREAM_LIMIT);
  setStream(await fetchAll("events/?after=" + after + "&limit=" + STREAM_LIMIT, "events"));
  // Event leaves the graph has never seen (new sources) get their summary too.
  const missing = new Set();
  for (const frame of model.frames.values()) {
    for (const ref of frame.sources) if (isEventRef(ref) && !model.eventInfo.has(ref)) missing.add(ref);
  }
  await Promise.all([...missing].slice(0, 50).map(async (ref) => {
    const chunk = await api("events/" + eventSeq(ref) + "/?length=200");
    model.eventInfo.set(ref, {
      ref, kind: chunk.kind, status: chunk.status, size: chunk.size, preview: chunk.content, thread: chunk.thread,
    });
  }));
}

export async function refreshTransactions() {
  const last = model.transactions.length ? model.transactions[model.transactions.length - 1].id : 0;
  rememberTransactions(await fetchAll("transactions/?after=" + last + "&limit=200", "transactions"));
}

export async function refreshAll(selected) {
  await refreshContext();
  model.details.clear();
  await Promise.all([refreshFrames(null), refreshRelations(), refreshEvents(), refreshTransactions()]);
  if (selected && model.frames.has(selected)) await loadFrameDetail(selected);
}
