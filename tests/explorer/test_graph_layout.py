"""The graph is readable at its first zoom on a laptop screen, and stays put across reloads.

Sizes are measured from what Cytoscape drew (rendered bounding boxes in screen pixels), not
read back from the style sheet."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.contexts import create_context
from memory.demo.player import load_demo
from memory.tx.engine import Author, submit_transaction
from tests.explorer.conftest import PASSWORD, ExplorerPage, Team

LAPTOP = {"width": 1280, "height": 720}
LEGIBLE_PX = 13  # a label's drawn box: 14 px text at zoom 0.78 or more

RENDERED = """() => {
  const cy = document.getElementById('graph')._cyreg.cy;
  return {
    zoom: cy.zoom(), width: cy.width(), height: cy.height(),
    frames: cy.nodes('.frame').map(n => {
      const label = n.renderedBoundingBox({includeNodes: false, includeEdges: false, includeLabels: true});
      const box = n.renderedBoundingBox({includeLabels: false});
      return {id: n.data('fid'), label_h: label.h, x1: box.x1, y1: box.y1, x2: box.x2, y2: box.y2,
              pos: n.position()};
    }),
  };
}"""


def rendered(page: ExplorerPage) -> dict[str, Any]:
    return dict(page.page.evaluate(RENDERED))


def overlaps(a: dict[str, float], b: dict[str, float]) -> bool:
    return a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]


def test_demo_labels_are_legible_at_first_sight_and_stay_put(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    explorer.page.set_viewport_size(LAPTOP)
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    first = rendered(explorer)

    frames = first["frames"]
    assert len(frames) > 30
    small = [f["id"] for f in frames if f["label_h"] < LEGIBLE_PX]
    assert not small, f"labels drawn smaller than {LEGIBLE_PX} px: {small}"
    # The whole demo is on screen, no frame on top of another.
    outside = [
        f["id"]
        for f in frames
        if f["x1"] < 0 or f["y1"] < 0 or f["x2"] > first["width"] or f["y2"] > first["height"]
    ]
    assert not outside, f"frames off the canvas at first sight: {outside}"
    clashes = [
        (a["id"], b["id"]) for i, a in enumerate(frames) for b in frames[i + 1 :] if overlaps(a, b)
    ]
    assert not clashes, clashes

    explorer.page.reload()
    explorer.open_context("demo")
    again = rendered(explorer)
    before = {f["id"]: (round(f["pos"]["x"], 1), round(f["pos"]["y"], 1)) for f in frames}
    after = {f["id"]: (round(f["pos"]["x"], 1), round(f["pos"]["y"], 1)) for f in again["frames"]}
    assert before == after
    assert again["zoom"] == first["zoom"]


def test_a_small_graph_is_not_blown_up(reviewer_page: ExplorerPage, team: Team) -> None:
    reviewer_page.page.set_viewport_size(LAPTOP)
    reviewer_page.open_context(team.slug)
    frames = rendered(reviewer_page)["frames"]
    assert {f["id"] for f in frames} == {"release", "plan"}
    assert all(LEGIBLE_PX <= f["label_h"] <= 24 for f in frames), frames


def test_a_500_frame_context_opens_readable_and_hides_labels_when_zoomed_out(
    explorer: ExplorerPage, staff_user: Any
) -> None:
    context = create_context("big", name="Five hundred frames")
    agent = Author("agent", "agent")
    for start in range(0, 500, 50):
        ops = " ".join(
            f'(derive note-{n:03d} (topic t{n % 7}) (text "note number {n}"))'
            + (f" (relate note-{n:03d} follows note-{n - 1:03d})" if n % 10 else "")
            for n in range(start, start + 50)
        )
        submit_transaction(context.pk, text=f"(context-tx {ops})", author=agent)
    explorer.page.set_viewport_size(LAPTOP)
    explorer.page.set_default_timeout(30_000)  # laying out 500 frames on a busy test machine
    explorer.login("reviewer", PASSWORD, "/contexts/big/")
    explorer.open_context("big")

    first = rendered(explorer)
    assert len(first["frames"]) == 500
    on_screen = [
        f
        for f in first["frames"]
        if f["x2"] > 0 and f["y2"] > 0 and f["x1"] < first["width"] and f["y1"] < first["height"]
    ]
    assert len(on_screen) >= 10
    assert all(f["label_h"] >= LEGIBLE_PX for f in on_screen)

    # Zoomed out to see everything, labels would be specks: Cytoscape stops drawing them.
    explorer.page.click("#fit")
    hidden = explorer.page.evaluate(
        """() => { const cy = document.getElementById('graph')._cyreg.cy;
            const n = cy.nodes('.frame').first();
            return n.pstyle('font-size').pfValue * cy.zoom() < n.pstyle('min-zoomed-font-size').pfValue; }"""
    )
    assert hidden
