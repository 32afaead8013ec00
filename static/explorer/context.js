/* Morphz explorer for one context: the cognitive graph, panels, live updates, corrections.
 *
 * First paint comes from the server (json_script); every later read and every write goes
 * through the REST API under /api/v1/contexts/<slug>/ with the session cookie and CSRF
 * header. Everything a model wrote is put on the page with textContent (never innerHTML), and
 * the graph draws labels on a canvas, so no HTML or script from a frame or event ever runs.
 */
(function () {
  "use strict";

  const page = JSON.parse(document.getElementById("page-data").textContent);
  const snapshot = JSON.parse(document.getElementById("snapshot-data").textContent);
  const $ = (id) => document.getElementById(id);

  const state = {
    context: snapshot.context,
    frames: new Map(),
    relations: [],
    eventInfo: new Map(), // ref -> event summary (graph leaves and the stream)
    stream: [], // recent event refs, oldest first
    transactions: [], // oldest first
    selected: null,
    detail: null, // the selected frame's detail from the API (revisions, write history)
    editor: null, // {frameId, baseVersion, revision} while the edit form is open
    reader: null, // {seq, offset}
  };
  const STREAM_LIMIT = 80;
  const TX_LIMIT = 60;
  const READ_CHUNK = 4096;

  // ---------------------------------------------------------------- DOM helpers
  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (key === "class") node.className = value;
      else if (key === "text") node.textContent = value;
      else if (key.startsWith("data-")) node.setAttribute(key, value);
      else node[key] = value;
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }
  function clear(node) {
    node.replaceChildren();
    return node;
  }
  function isEventRef(ref) {
    return typeof ref === "string" && /^@e[1-9][0-9]*$/.test(ref);
  }
  function ticksLeft(frame) {
    if (!frame.retire) return null;
    return Math.max(0, frame.retire.due_tick - state.context.tick);
  }

  // ---------------------------------------------------------------- REST API
  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : "";
  }
  class ApiError extends Error {
    constructor(status, body) {
      const error = (body && body.error) || {};
      super(error.message || "request failed with HTTP " + status);
      this.status = status;
      this.code = error.code || "http_" + status;
      this.details = Array.isArray(error.details) ? error.details : [];
    }
  }
  async function api(path, options) {
    const opts = Object.assign({ credentials: "same-origin", headers: {} }, options || {});
    opts.headers = Object.assign({ Accept: "application/json" }, opts.headers);
    if (opts.body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.headers["X-CSRFToken"] = csrfToken();
      opts.body = JSON.stringify(opts.body);
    }
    const response = await fetch(page.api + path, opts);
    let data = null;
    try {
      data = await response.json();
    } catch (e) {
      data = null;
    }
    if (!response.ok) throw new ApiError(response.status, data);
    return data;
  }
  async function fetchAll(path, key) {
    const items = [];
    let cursor = null;
    for (let i = 0; i < 100; i++) {
      const sep = path.includes("?") ? "&" : "?";
      const data = await api(path + (cursor ? sep + "cursor=" + encodeURIComponent(cursor) : ""));
      items.push(...(data[key] || []));
      cursor = data.next_cursor;
      if (!cursor) break;
    }
    return items;
  }

  // ---------------------------------------------------------------- state from data
  function setFrames(list) {
    for (const frame of list) state.frames.set(frame.id, frame);
  }
  function rememberEvents(list, inStream) {
    for (const event of list) {
      state.eventInfo.set(event.ref, event);
      if (inStream && !state.stream.includes(event.ref)) state.stream.push(event.ref);
    }
    if (inStream) {
      state.stream.sort((a, b) => Number(a.slice(2)) - Number(b.slice(2)));
      state.stream = state.stream.slice(-STREAM_LIMIT);
    }
  }
  function rememberTransactions(list) {
    const known = new Set(state.transactions.map((t) => t.id));
    for (const tx of list) if (!known.has(tx.id)) state.transactions.push(tx);
    state.transactions.sort((a, b) => a.id - b.id);
    state.transactions = state.transactions.slice(-TX_LIMIT);
  }
  setFrames(snapshot.frames);
  state.relations = snapshot.relations;
  rememberEvents(snapshot.source_events, false);
  rememberEvents(snapshot.events, true);
  rememberTransactions(snapshot.transactions);

  // ---------------------------------------------------------------- the graph
  const STATUS_COLOURS = { active: "#2e7d32", retiring: "#ef8f00", retired: "#9e9e9e" };
  const cy = cytoscape({
    container: $("graph"),
    minZoom: 0.05,
    maxZoom: 3,
    style: [
      {
        selector: "node.frame",
        style: {
          shape: "round-rectangle",
          "background-color": (n) => STATUS_COLOURS[n.data("status")] || "#607d8b",
          label: "data(label)",
          color: "#1d232b",
          "font-size": 12,
          "min-zoomed-font-size": 5, // labels fade out when zoomed far out, back on zoom in
          "text-valign": "bottom",
          "text-margin-y": 4,
          width: 26,
          height: 18,
          "border-width": 0,
        },
      },
      { selector: "node.retired", style: { opacity: 0.6 } },
      {
        selector: "node.protected",
        style: { "border-width": 4, "border-color": "#1565c0", "border-style": "double" },
      },
      {
        selector: "node.event",
        style: {
          shape: "ellipse",
          "background-color": "#90caf9",
          label: "data(label)",
          "font-size": 9,
          color: "#445",
          width: 12,
          height: 12,
        },
      },
      { selector: "node.event.retired-event", style: { "background-color": "#d6e6f5" } },
      {
        selector: "edge.relation",
        style: {
          width: 1.5,
          "line-color": "#7b8794",
          "target-arrow-color": "#7b8794",
          "target-arrow-shape": "triangle",
          "curve-style": "bezier",
          label: "data(name)",
          "font-size": 10,
          "min-zoomed-font-size": 5,
          "text-rotation": "autorotate",
          "text-background-color": "#fff",
          "text-background-opacity": 0.85,
          "text-background-padding": 1,
        },
      },
      {
        selector: "edge.source",
        style: {
          width: 1,
          "line-style": "dashed",
          "line-color": "#b0b8c1",
          "target-arrow-shape": "vee",
          "target-arrow-color": "#b0b8c1",
          "curve-style": "bezier",
        },
      },
      { selector: "node:selected", style: { "overlay-color": "#1565c0", "overlay-opacity": 0.25 } },
      { selector: "node.hit", style: { "underlay-color": "#fdd835", "underlay-opacity": 0.6, "underlay-padding": 6 } },
    ],
  });

  function frameNode(frame) {
    return {
      group: "nodes",
      data: {
        id: "f:" + frame.id,
        fid: frame.id,
        status: frame.status,
        label: (frame.protected ? "🔒 " : "") + frame.id + " r" + frame.revision,
      },
      classes: ["frame", frame.status, frame.protected ? "protected" : ""].join(" ").trim(),
    };
  }
  function eventNode(ref) {
    const info = state.eventInfo.get(ref);
    const retired = info && info.status === "retired";
    return {
      group: "nodes",
      data: { id: "e:" + ref, ref: ref, label: ref },
      classes: "event" + (retired ? " retired-event" : ""),
    };
  }
  function desiredElements() {
    const showEvents = $("toggle-events").checked;
    const out = new Map();
    for (const frame of state.frames.values()) {
      const node = frameNode(frame);
      out.set(node.data.id, node);
    }
    for (const frame of state.frames.values()) {
      for (const ref of frame.sources) {
        let target = null;
        if (isEventRef(ref)) {
          if (!showEvents) continue;
          target = "e:" + ref;
          if (!out.has(target)) out.set(target, eventNode(ref));
        } else if (state.frames.has(ref)) {
          target = "f:" + ref;
        }
        if (!target) continue;
        const id = "s:" + frame.id + ">" + ref;
        out.set(id, { group: "edges", data: { id, source: "f:" + frame.id, target }, classes: "source" });
      }
    }
    for (const rel of state.relations) {
      if (!state.frames.has(rel.subject) || !state.frames.has(rel.object)) continue;
      const id = "r:" + rel.subject + ">" + rel.name + ">" + rel.object;
      out.set(id, {
        group: "edges",
        data: { id, source: "f:" + rel.subject, target: "f:" + rel.object, name: rel.name },
        classes: "relation",
      });
    }
    return out;
  }
  function layoutOptions(count, randomize) {
    // Force-directed (cose) keeps clusters apart and stays readable at a few hundred
    // nodes; large graphs get fewer iterations so the first render stays well under a second.
    const large = count > 250;
    return {
      name: "cose",
      animate: false,
      randomize: randomize,
      fit: true,
      padding: 30,
      nodeRepulsion: () => (large ? 30000 : 40000),
      nodeOverlap: 40,
      idealEdgeLength: () => (large ? 60 : 80),
      edgeElasticity: () => 80,
      componentSpacing: 60,
      gravity: large ? 0.6 : 0.3,
      numIter: large ? 300 : 1500,
      coolingFactor: large ? 0.95 : 0.99,
    };
  }
  function syncGraph(forceLayout) {
    const wanted = desiredElements();
    const added = [];
    cy.batch(() => {
      cy.elements().forEach((ele) => {
        if (!wanted.has(ele.id())) ele.remove();
      });
      for (const [id, spec] of wanted) {
        const existing = cy.getElementById(id);
        if (existing.nonempty()) {
          existing.data(spec.data);
          existing.classes(spec.classes);
        } else {
          added.push(spec);
        }
      }
      const nodes = added.filter((s) => s.group === "nodes");
      const edges = added.filter((s) => s.group === "edges");
      if (nodes.length) cy.add(nodes);
      if (edges.length) cy.add(edges);
    });
    const addedNodes = added.filter((s) => s.group === "nodes");
    if (forceLayout) {
      cy.layout(layoutOptions(cy.nodes().length, true)).run();
    } else if (addedNodes.length) {
      // New nodes start beside a neighbour, then a short layout settles them without
      // throwing the rest of the graph around.
      for (const spec of addedNodes) {
        const node = cy.getElementById(spec.data.id);
        const neighbour = node.neighborhood("node").filter((n) => !addedNodes.includes(n));
        const base = neighbour.nonempty() ? neighbour.first().position() : { x: 0, y: 0 };
        node.position({ x: base.x + 40 + Math.random() * 30, y: base.y + 40 + Math.random() * 30 });
      }
      if (cy.nodes().length <= 250) cy.layout(layoutOptions(cy.nodes().length, false)).run();
      // Larger graphs keep their layout; new nodes stay beside their neighbour.
    }
    if (state.selected) cy.getElementById("f:" + state.selected).select();
    document.body.dataset.graphNodes = String(cy.nodes().length);
  }

  cy.on("tap", "node.frame", (evt) => selectFrame(evt.target.data("fid")));
  cy.on("tap", "node.event", (evt) => openReader(evt.target.data("ref")));
  $("toggle-events").addEventListener("change", () => syncGraph(false));
  $("relayout").addEventListener("click", () => syncGraph(true));
  $("fit").addEventListener("click", () => cy.fit(undefined, 30));

  // ---------------------------------------------------------------- status bar, panels
  function renderStatus() {
    const ctx = state.context;
    $("ctx-version").textContent = String(ctx.version);
    $("ctx-tick").textContent = String(ctx.tick);
    const p = ctx.pressure || {};
    const percent = typeof p.percent === "number" ? p.percent : 0;
    $("pressure-gauge").dataset.level = p.level || "ok";
    $("pressure-fill").style.width = Math.min(100, percent) + "%";
    $("pressure-text").textContent =
      (p.level || "ok") + " · " + (p.used_tokens || 0) + " / " + (p.capacity_tokens || 0) +
      " tokens (" + percent + "%)";
  }

  function frameButton(id) {
    const button = el("button", { type: "button", text: id });
    button.addEventListener("click", () => selectFrame(id));
    return button;
  }
  function refButton(ref) {
    if (!isEventRef(ref)) return frameButton(ref);
    const button = el("button", { type: "button", text: ref });
    button.addEventListener("click", () => openReader(ref));
    return button;
  }

  function renderRetirement() {
    const rows = clear($("retirement-rows"));
    const retiring = [...state.frames.values()]
      .filter((f) => f.status === "retiring" && f.retire)
      .sort((a, b) => a.retire.due_tick - b.retire.due_tick);
    for (const frame of retiring) {
      rows.append(
        el("tr", { "data-frame": frame.id },
          el("td", {}, frameButton(frame.id)),
          el("td", { text: frame.retire.reason || "" }),
          el("td", { text: String(frame.retire.due_tick) }),
          el("td", { class: "ticks-left", text: String(ticksLeft(frame)) }))
      );
    }
    $("retirement-empty").hidden = retiring.length > 0;
  }

  function renderTransactions() {
    const list = clear($("transactions"));
    for (const tx of [...state.transactions].reverse()) {
      const head = el("summary", {},
        tx.status === "committed" ? "v" + tx.committed_version : "rejected",
        " · base " + (tx.base_version === null ? "-" : tx.base_version) + " · ",
        el("span", { class: "muted", text: tx.author }),
        tx.reason ? " · " + tx.reason : "");
      const body = el("details", {}, head, el("pre", { text: tx.text }));
      if (tx.errors) body.append(el("pre", { text: JSON.stringify(tx.errors, null, 2) }));
      list.append(el("li", { class: tx.status, "data-tx": String(tx.id) }, body));
    }
  }

  function renderEvents() {
    const list = clear($("events"));
    for (const ref of [...state.stream].reverse()) {
      const e = state.eventInfo.get(ref);
      if (!e) continue;
      const open = el("button", { type: "button", text: ref });
      open.addEventListener("click", () => openReader(ref));
      list.append(
        el("li", { "data-ref": ref },
          open, " ", el("span", { class: "tag", text: e.kind }), " ",
          e.status ? el("span", { class: "tag " + e.status, text: e.status }) : null,
          el("span", { class: "muted", text: " " + e.thread + " · " + e.size + " chars" }),
          el("span", { class: "preview", text: (e.preview || "").slice(0, 200) }))
      );
    }
  }

  // ---------------------------------------------------------------- side panel
  function bodyTree(value) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const dl = el("dl");
      for (const [key, item] of Object.entries(value)) {
        dl.append(el("dt", { text: key }), el("dd", {}, bodyTree(item)));
      }
      return dl;
    }
    if (Array.isArray(value)) {
      const ul = el("ul");
      for (const item of value) ul.append(el("li", {}, bodyTree(item)));
      return ul;
    }
    return el("span", { text: String(value) });
  }

  function selectFrame(id) {
    if (!state.frames.has(id)) return;
    if (state.selected !== id) {
      closeEditor();
      showResult(null);
      state.detail = null;
    }
    state.selected = id;
    cy.elements().unselect();
    const node = cy.getElementById("f:" + id);
    node.select();
    renderSide();
    loadDetail(id);
  }

  async function loadDetail(id) {
    try {
      const detail = await api("frames/" + encodeURIComponent(id) + "/");
      if (state.selected !== id) return;
      state.detail = detail;
      setFrames([stripDetail(detail)]);
      renderSide();
    } catch (err) {
      if (state.selected === id) showResult(err);
    }
  }
  function stripDetail(detail) {
    const frame = Object.assign({}, detail);
    delete frame.revisions;
    delete frame.write_history;
    return frame;
  }

  function renderSide() {
    const id = state.selected;
    const frame = id && state.frames.get(id);
    $("side-empty").hidden = !!frame;
    $("frame-detail").hidden = !frame;
    if (!frame) return;
    $("frame-title").textContent = frame.id;
    const badges = clear($("frame-badges"));
    badges.append(
      el("span", { class: "status-" + frame.status, id: "frame-status", text: frame.status }),
      el("span", { id: "frame-revision", text: "revision " + frame.revision })
    );
    if (frame.protected) badges.append(el("span", { class: "protected", text: "protected" }));
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
    if (!frame.sources.length) sources.append(el("li", { class: "muted", text: "none" }));
    renderRelations(frame);
    $("relate-subject").textContent = frame.id;
    $("btn-retire").hidden = frame.status !== "active" || frame.protected;
    $("btn-restore").hidden = frame.status === "active";
    $("btn-protect").hidden = frame.protected || frame.status === "retired";
    $("btn-unprotect").hidden = !frame.protected;
    renderHistory();
    renderEditorNotice();
  }

  function renderRelations(frame) {
    const list = clear($("frame-relations"));
    const mine = state.relations.filter((r) => r.subject === frame.id || r.object === frame.id);
    for (const rel of mine) {
      const unrelate = el("button", { type: "button", class: "unrelate", text: "unrelate" });
      unrelate.addEventListener("click", () =>
        submitOps([{ op: "unrelate", subject: rel.subject, name: rel.name, object: rel.object }]));
      list.append(el("li", {}, frameButton(rel.subject), " " + rel.name + " ", frameButton(rel.object), unrelate));
    }
    if (!mine.length) list.append(el("li", { class: "muted", text: "none" }));
  }

  function renderHistory() {
    const list = clear($("frame-history"));
    const detail = state.detail;
    if (!detail || detail.id !== state.selected) {
      list.append(el("li", { class: "muted", text: "loading…" }));
      return;
    }
    for (const entry of [...(detail.write_history || [])].reverse()) {
      list.append(
        el("li", { "data-revision": String(entry.revision) },
          el("b", { text: "revision " + entry.revision }),
          " · " + entry.op + " · version " + entry.version + " (base " + entry.base_version + ") · ",
          el("span", { class: "muted", text: entry.author }),
          el("pre", { text: entry.text }))
      );
    }
  }

  // ---------------------------------------------------------------- corrections (R40)
  function reasonText(fallback) {
    const typed = $("action-reason").value.trim();
    return typed || fallback + " (by " + page.user + " in the explorer)";
  }

  function showResult(outcome) {
    const box = clear($("action-result"));
    box.className = "result";
    if (!outcome) return;
    if (!(outcome instanceof Error)) {
      box.append("Committed as version " + outcome.version + ".");
      return;
    }
    box.classList.add(outcome.code === "conflict" ? "conflict" : "error");
    box.dataset.code = outcome.code;
    const title = outcome.code === "conflict"
      ? "Conflict: this changed since the version you edited. Nothing was written."
      : "Rejected (" + outcome.code + "). Nothing was written.";
    box.append(el("b", { text: title }), el("div", { text: outcome.message }));
    if (outcome.details.length) {
      const list = el("ul", { class: "details" });
      for (const d of outcome.details) list.append(el("li", { text: describeDetail(d) }));
      box.append(list);
    }
    if (outcome.code === "conflict") {
      const reload = el("button", { type: "button", text: "re-read and edit again" });
      reload.addEventListener("click", () => {
        const id = state.editor && state.editor.frameId;
        closeEditor();
        showResult(null);
        refreshAll().then(() => id && openEditor(id));
      });
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
    if (d.index !== undefined) return "operation " + d.index + " (" + d.op + "): " + (d.code ? d.code + ": " : "") + d.message;
    return JSON.stringify(d);
  }

  async function submit(payload, busyButton) {
    if (busyButton) busyButton.disabled = true;
    try {
      const receipt = await api("transactions/", { method: "POST", body: payload });
      showResult(receipt);
      await refreshAll();
      return receipt;
    } catch (err) {
      if (!(err instanceof ApiError)) err = new ApiError(0, { error: { message: String(err) } });
      showResult(err);
      return null;
    } finally {
      if (busyButton) busyButton.disabled = false;
    }
  }
  function submitOps(ops, reason) {
    return submit({ base_version: state.context.version, reason: reasonText(reason || ops[0].op), ops });
  }

  for (const id of ["btn-retire", "btn-restore", "btn-protect", "btn-unprotect"]) {
    const button = $(id);
    button.addEventListener("click", () => {
      const op = button.dataset.op;
      const frame = state.selected;
      if (!frame) return;
      const operation = op === "retire" ? { op, refs: [frame] } : { op, ids: [frame] };
      submit({ base_version: state.context.version, reason: reasonText(op), ops: [operation] }, button);
    });
  }
  $("relate-form").addEventListener("submit", (evt) => {
    evt.preventDefault();
    const name = $("relate-name").value.trim();
    const object = $("relate-object").value.trim();
    if (!state.selected || !name || !object) return;
    submitOps([{ op: "relate", subject: state.selected, name, object }], "relate").then((ok) => {
      if (ok) $("relate-name").value = $("relate-object").value = "";
    });
  });

  // The S-expression printer writes strings quoted, so any text round-trips through the
  // server's parser (bare atoms are only a convenience for the model).
  function quote(text) {
    return '"' + String(text).replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\t/g, "\\t") + '"';
  }
  function sexprValue(value) {
    if (Array.isArray(value)) return "[" + value.map(sexprValue).join(" ") + "]";
    if (value !== null && typeof value === "object") {
      return "{" + Object.entries(value).map(([k, v]) => sexprField(k, v, "")).join(" ") + "}";
    }
    return quote(value);
  }
  function sexprField(key, value, indent) {
    const k = /^[A-Za-z_][A-Za-z0-9_.\-]*$/.test(key) ? key : quote(key);
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      const entries = Object.entries(value);
      if (!entries.length) return "(" + k + " {})";
      return "(" + k + "\n" + entries.map(([kk, vv]) => indent + "  " + sexprField(kk, vv, indent + "  ")).join("\n") + ")";
    }
    if (Array.isArray(value) && value.length > 1 && value.every((v) => typeof v !== "object" || v === null)) {
      return "(" + k + " " + value.map(sexprValue).join(" ") + ")";
    }
    return "(" + k + " " + sexprValue(value) + ")";
  }
  function bodyToFields(body) {
    return Object.entries(body || {}).map(([k, v]) => sexprField(k, v, "")).join("\n");
  }

  function openEditor(id) {
    const frame = state.frames.get(id || state.selected);
    if (!frame) return;
    state.editor = { frameId: frame.id, baseVersion: state.context.version, revision: frame.revision };
    $("edit-frame").textContent = frame.id;
    $("edit-revision").textContent = String(frame.revision);
    $("edit-base").textContent = String(state.context.version);
    fillEditor(frame);
    $("edit-form").hidden = false;
    renderEditorNotice();
    $("edit-text").focus();
  }
  function fillEditor(frame) {
    $("edit-text").value = $("edit-mode").value === "json"
      ? JSON.stringify(frame.body, null, 2)
      : bodyToFields(frame.body);
  }
  function closeEditor() {
    state.editor = null;
    $("edit-form").hidden = true;
    $("edit-stale").hidden = true;
  }
  function renderEditorNotice() {
    const ed = state.editor;
    const notice = $("edit-stale");
    if (!ed || ed.frameId !== state.selected) {
      notice.hidden = true;
      return;
    }
    const now = state.frames.get(ed.frameId);
    const changed = now && now.revision !== ed.revision;
    notice.hidden = !changed;
    if (changed) {
      notice.textContent = ed.frameId + " changed while you were editing (now revision " +
        now.revision + ", " + now.status + "); saving will be refused as a conflict.";
    }
  }
  $("btn-edit").addEventListener("click", () => openEditor());
  $("edit-cancel").addEventListener("click", closeEditor);
  $("edit-mode").addEventListener("change", () => {
    const frame = state.editor && state.frames.get(state.editor.frameId);
    if (frame) fillEditor(frame);
  });
  $("edit-form").addEventListener("submit", (evt) => {
    evt.preventDefault();
    const ed = state.editor;
    if (!ed) return;
    const reason = reasonText("revise " + ed.frameId);
    const text = $("edit-text").value;
    let payload;
    if ($("edit-mode").value === "json") {
      let body;
      try {
        body = JSON.parse(text);
      } catch (err) {
        showResult(new ApiError(400, { error: { code: "invalid_json", message: "The body is not valid JSON: " + err.message } }));
        return;
      }
      if (body === null || typeof body !== "object" || Array.isArray(body)) {
        showResult(new ApiError(400, { error: { code: "invalid_json", message: "The body must be a JSON object (a map of fields)." } }));
        return;
      }
      payload = { base_version: ed.baseVersion, reason, ops: [{ op: "revise", id: ed.frameId, body }] };
    } else {
      payload = {
        text: "(context-tx\n  (base-version " + ed.baseVersion + ")\n  (reason " + quote(reason) +
          ")\n  (revise " + ed.frameId + "\n" + text + "))",
      };
    }
    submit(payload, $("edit-save")).then((receipt) => {
      if (receipt) closeEditor();
    });
  });

  // ---------------------------------------------------------------- event reader (R31)
  async function openReader(ref) {
    const seq = Number(ref.slice(2));
    state.reader = { seq, offset: 0, ref };
    $("reader-title").textContent = ref;
    $("reader-meta").textContent = "";
    $("reader-text").textContent = "";
    $("reader-progress").textContent = "";
    const dialog = $("event-reader");
    if (!dialog.open) dialog.showModal();
    await readMore();
  }
  async function readMore() {
    const reader = state.reader;
    if (!reader || reader.offset === null) return;
    try {
      const chunk = await api("events/" + reader.seq + "/?offset=" + reader.offset + "&length=" + READ_CHUNK);
      if (state.reader !== reader) return;
      $("reader-meta").textContent = chunk.kind + " · " + (chunk.status || "recorded") + " · " + chunk.size + " chars";
      $("reader-text").append(document.createTextNode(chunk.content));
      reader.offset = chunk.next_offset;
      const shown = reader.offset === null ? chunk.size : reader.offset;
      $("reader-progress").textContent = "showing " + shown + " of " + chunk.size + " characters";
      $("reader-more").hidden = reader.offset === null;
    } catch (err) {
      $("reader-progress").textContent = "could not read: " + err.message;
    }
  }
  $("reader-more").addEventListener("click", readMore);

  // ---------------------------------------------------------------- search (R33)
  $("search-form").addEventListener("submit", async (evt) => {
    evt.preventDefault();
    const q = $("search-input").value.trim();
    const box = $("search-results");
    cy.nodes().removeClass("hit");
    if (!q) {
      box.hidden = true;
      return;
    }
    clear(box).append(el("p", { class: "muted", text: "searching…" }));
    box.hidden = false;
    try {
      const data = await api("search/?q=" + encodeURIComponent(q));
      renderSearch(data, q);
    } catch (err) {
      clear(box).append(el("p", { class: "error", text: "search failed: " + err.message }));
    }
  });
  function snippetNode(hit) {
    // The API marks matches as parts ({text, match}); each part becomes a text node or a
    // <mark> built here, so the snippet itself is only ever text.
    const span = el("span");
    const parts = Array.isArray(hit.snippet_parts) ? hit.snippet_parts : [{ text: hit.snippet || "", match: false }];
    for (const part of parts) {
      span.append(part.match ? el("mark", { text: part.text }) : document.createTextNode(part.text));
    }
    return span;
  }
  function renderSearch(data, q) {
    const box = clear($("search-results"));
    const hits = data.hits || data.results || [];
    const close = el("button", { type: "button", text: "close" });
    close.addEventListener("click", () => {
      box.hidden = true;
      cy.nodes().removeClass("hit");
    });
    box.append(el("div", {}, el("b", { text: hits.length + " hits for " + q }), " ", close));
    const lag = data.lag || {};
    if (lag.pending_intents) {
      box.append(el("div", { class: "muted", text: "the index is catching up: " + lag.pending_intents +
        " changes pending (" + Math.round(lag.oldest_pending_seconds || 0) + " s)" }));
    }
    const list = el("ul");
    for (const hit of hits) {
      const ref = hit.ref || hit.id;
      const isEvent = isEventRef(ref);
      const item = el("li", { "data-ref": ref },
        el("b", { text: ref }), " ",
        el("span", { class: "tag", text: hit.status || hit.kind || (isEvent ? "event" : "frame") }),
        el("div", {}, snippetNode(hit)));
      item.addEventListener("click", () => (isEvent ? openReader(ref) : selectFrame(ref)));
      list.append(item);
      if (!isEvent) cy.getElementById("f:" + ref).addClass("hit");
    }
    box.append(list);
  }

  // ---------------------------------------------------------------- refresh through the API
  async function refreshContext() {
    state.context = await api("");
  }
  async function refreshFrames(ids) {
    if (!ids) {
      const frames = await fetchAll("frames/?limit=500", "frames");
      state.frames = new Map(frames.map((f) => [f.id, f]));
      return;
    }
    await Promise.all(ids.map(async (id) => {
      try {
        const detail = await api("frames/" + encodeURIComponent(id) + "/");
        setFrames([stripDetail(detail)]);
        if (state.selected === id) state.detail = detail;
      } catch (err) {
        if (err.status === 404) state.frames.delete(id);
      }
    }));
  }
  async function refreshRelations() {
    state.relations = await fetchAll("relations/?limit=500", "relations");
  }
  async function refreshEvents() {
    const last = state.stream.length ? Number(state.stream[state.stream.length - 1].slice(2)) : 0;
    const after = Math.max(last, (state.context.last_seq || 0) - STREAM_LIMIT);
    const events = await fetchAll("events/?after=" + after + "&limit=200", "events");
    rememberEvents(events, true);
    // Event leaves the graph has never seen (new sources) get their summary too.
    const missing = [];
    for (const frame of state.frames.values()) {
      for (const ref of frame.sources) if (isEventRef(ref) && !state.eventInfo.has(ref)) missing.push(ref);
    }
    await Promise.all([...new Set(missing)].slice(0, 50).map(async (ref) => {
      const chunk = await api("events/" + ref.slice(2) + "/?length=200");
      state.eventInfo.set(ref, { ref, kind: chunk.kind, status: chunk.status, size: chunk.size, preview: chunk.content, thread: chunk.thread });
    }));
  }
  // The transaction list pages from the oldest; with `after` (like events) only what is new
  // is read, otherwise the page walks the list (fine for thousands, noted in the report).
  let txAfter = true;
  async function refreshTransactions() {
    const last = state.transactions.length ? state.transactions[state.transactions.length - 1].id : 0;
    if (txAfter) {
      try {
        rememberTransactions(await fetchAll("transactions/?after=" + last + "&limit=200", "transactions"));
        return;
      } catch (err) {
        if (err.status !== 400) throw err;
        txAfter = false;
      }
    }
    const all = await fetchAll("transactions/?limit=200", "transactions");
    rememberTransactions(all.filter((t) => t.id > last));
  }
  async function refreshAll() {
    await refreshContext();
    await Promise.all([refreshFrames(null), refreshRelations(), refreshEvents(), refreshTransactions()]);
    if (state.selected && state.frames.has(state.selected)) await refreshFrames([state.selected]);
    renderAll(false);
  }

  function renderAll(forceLayout) {
    renderStatus();
    syncGraph(forceLayout);
    renderRetirement();
    renderTransactions();
    renderEvents();
    renderSide();
    const list = clear($("frame-ids"));
    for (const id of state.frames.keys()) list.append(el("option", { value: id }));
    document.body.dataset.version = String(state.context.version);
    document.body.dataset.tick = String(state.context.tick);
  }

  // ---------------------------------------------------------------- live updates (R39)
  // Changes arriving together are folded into one refetch, started at once and never
  // overlapping; what arrives during a refetch triggers one more.
  const pending = { frames: new Set(), context: false, relations: false, events: false, transactions: false, all: false };
  let refreshing = false;
  function noteChange(change) {
    pending.context = true;
    if (change.type === "transaction") {
      for (const id of change.frames || []) pending.frames.add(id);
      pending.relations = pending.events = pending.transactions = true;
    } else if (change.type === "tick") {
      for (const id of change.expired || []) pending.frames.add(id);
      pending.events = true;
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
          await refreshAll();
          continue;
        }
        await refreshContext();
        const tasks = [];
        if (job.frames.length) tasks.push(refreshFrames(job.frames));
        if (job.relations) tasks.push(refreshRelations());
        if (job.events) tasks.push(refreshEvents());
        if (job.transactions) tasks.push(refreshTransactions());
        await Promise.all(tasks);
        if (state.selected && !job.frames.includes(state.selected) && job.relations) {
          await refreshFrames([state.selected]);
        }
        renderAll(false);
      }
    } catch (err) {
      console.error("refresh failed", err);
      pending.all = true;
      setTimeout(runRefresh, 2000);
    } finally {
      refreshing = false;
    }
  }

  let socket = null;
  let retryDelay = 500;
  function setLive(stateName, text) {
    const badge = $("live-status");
    badge.dataset.state = stateName;
    badge.textContent = text;
  }
  function connect() {
    const scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + page.ws);
    let opened = false;
    socket.addEventListener("open", () => {
      if (retryDelay > 500) noteChange({ type: "reconnect" }); // catch up on what we missed
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
      setLive("offline", evt.code === 4401 || evt.code === 4404 ? "not allowed" : "offline, reconnecting…");
      if (evt.code === 4401 || evt.code === 4404) return;
      retryDelay = opened ? 1000 : Math.min(retryDelay * 2, 15000);
      setTimeout(connect, retryDelay);
    });
  }

  // ---------------------------------------------------------------- start
  renderAll(true);
  performance.mark("morphz:first-render"); // read by bench/bench_live.py
  connect();
})();
