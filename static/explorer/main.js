/* Morphz explorer for one context: entry point. Wires the modules together and draws the
 * first paint from the server's snapshot (json_script); later reads and every write go
 * through the REST API. Everything a model wrote reaches the page as text (textContent, or
 * canvas labels), never as markup. */

import { $, on } from "./dom.js";
import { loadSnapshot } from "./model.js";
import * as graph from "./graph.js";
import { renderPanels } from "./panels.js";
import { selection, selectFrame, renderSide, renderFrameIds } from "./frame.js";
import "./editor.js";
import { openReader } from "./reader.js";
import "./search.js";
import { startLive } from "./live.js";
import { refreshEvaluations, renderEvaluations } from "./evaluations.js";
import { renderSlider } from "./timetravel.js";

loadSnapshot(JSON.parse($("snapshot-data").textContent));

function renderAll(fullLayout) {
  renderPanels();
  renderSlider();
  renderEvaluations();
  graph.sync(fullLayout);
  renderSide();
  renderFrameIds();
}

on("select-frame", (id) => {
  selectFrame(id);
  graph.centreOn(id);
});
on("frame-selected", (id) => graph.select(id));
on("open-event", openReader);
on("refreshed", () => renderAll(false));

$("toggle-events").addEventListener("change", (evt) => graph.setShowEvents(evt.target.checked));
$("relayout").addEventListener("click", () => graph.sync(true));
$("fit").addEventListener("click", graph.fit);

renderAll(false); // the first paint: remembered positions, or a fresh layout
refreshEvaluations().then(renderEvaluations);
on("tick", () => refreshEvaluations().then(renderEvaluations));
performance.mark("morphz:first-render"); // read by bench/bench_live.py
startLive(() => selection.id);
