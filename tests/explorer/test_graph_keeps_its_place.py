"""The explorer keeps its place, measured at 1280×720 in what the browser drew.

- The first view shows every frame inside the window, or says how many are out of view
  (and "show all" brings them in).
- Frames stay where they were when a frame is added, live and across a reload: the new one
  goes beside its neighbour, the others move 0 px.
- The past view lays out only what existed at that version and fits it, banner shown,
  inside the window.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from memory.contexts import create_context, issue_token
from memory.demo.player import load_demo
from memory.tx.engine import Author, submit_transaction
from tests.explorer.conftest import PASSWORD, ExplorerPage

LAPTOP = {"width": 1280, "height": 720}

DRAWN = """() => {
  const cy = document.getElementById('graph')._cyreg.cy;
  const g = document.getElementById('graph').getBoundingClientRect();
  const notice = document.getElementById('graph-offview');
  return {
    vw: window.innerWidth, vh: window.innerHeight, graph_bottom: g.bottom,
    graph: {left: g.left, top: g.top, right: g.right, bottom: g.bottom},
    notice: notice.hidden ? 0 : Number(notice.dataset.hidden),
    frames: cy.nodes('.frame').map(n => {
      const b = n.renderedBoundingBox({includeLabels: false});
      return {id: n.data('fid'), x1: g.left + b.x1, y1: g.top + b.y1, x2: g.left + b.x2,
              y2: g.top + b.y2, x: n.position('x'), y: n.position('y')};
    }),
  };
}"""


def drawn(page: ExplorerPage) -> dict[str, Any]:
    page.page.wait_for_timeout(200)  # the out-of-view count is kept on the next frame
    return dict(page.page.evaluate(DRAWN))


def out_of_window(view: dict[str, Any]) -> list[str]:
    """Frames not wholly inside what a person sees of the canvas: the canvas within the
    window (the side panel is beside it, the fold below)."""
    g = view["graph"]
    left, top = max(0, g["left"]), max(0, g["top"])
    right, bottom = min(view["vw"], g["right"]), min(view["vh"], g["bottom"])
    return [
        f["id"]
        for f in view["frames"]
        if f["x1"] < left or f["y1"] < top or f["x2"] > right or f["y2"] > bottom
    ]


def positions(view: dict[str, Any]) -> dict[str, tuple[float, float]]:
    return {f["id"]: (f["x"], f["y"]) for f in view["frames"]}


def moved(before: dict[str, Any], after: dict[str, Any]) -> float:
    """How far the frames of `before` moved in `after` (graph units, the largest)."""
    a, b = positions(before), positions(after)
    return max(math.dist(a[i], b[i]) for i in a)


def test_the_first_view_shows_every_frame_or_says_how_many_are_not(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    explorer.page.set_viewport_size(LAPTOP)
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    view = drawn(explorer)
    hidden = out_of_window(view)
    print(f"demo at 1280x720: {len(view['frames']) - len(hidden)} of {len(view['frames'])} in view")
    assert len(view["frames"]) > 30
    assert view["graph_bottom"] <= view["vh"]  # the canvas ends above the fold
    assert view["notice"] == len(hidden)  # none hidden, or the count said
    if hidden:
        explorer.page.click("#graph-offview button")
        assert out_of_window(drawn(explorer)) == []


def test_a_graph_too_big_to_read_at_once_says_how_many_are_out_of_view(
    explorer: ExplorerPage, staff_user: Any
) -> None:
    context = create_context("wide", name="Many frames")
    ops = " ".join(f"(derive a-rather-long-note-name-{n:03d} (n {n}))" for n in range(300))
    submit_transaction(context.pk, text=f"(context-tx {ops})", author=Author("agent", "agent"))
    explorer.page.set_viewport_size(LAPTOP)
    explorer.login("reviewer", PASSWORD, "/contexts/wide/")
    explorer.open_context("wide")
    view = drawn(explorer)
    hidden = out_of_window(view)
    assert hidden and view["notice"] == len(hidden)
    assert explorer.page.text_content("#graph-offview").startswith(f"{len(hidden)} of 300 frames")
    explorer.page.click("#graph-offview button")
    after = drawn(explorer)
    assert out_of_window(after) == [] and after["notice"] == 0


def build(slug: str) -> tuple[int, str]:
    """A context of connected pieces and loose frames; its id and an agent token."""
    context = create_context(slug, name="Keeps its place")
    ops = " ".join(
        [f"(derive step-{n} (n {n}))" for n in range(8)]
        + [f"(relate step-{n} follows step-{n - 1})" for n in range(1, 5)]
        + [f"(derive loose-{n} (n {n}))" for n in range(6)]
    )
    submit_transaction(context.pk, text=f"(context-tx {ops})", author=Author("agent", "agent"))
    return context.pk, issue_token(context).raw


def test_frames_stay_put_when_a_frame_is_added_live_and_after_a_reload(
    explorer: ExplorerPage, staff_user: Any
) -> None:
    _, token = build("steady")
    explorer.page.set_viewport_size(LAPTOP)
    explorer.login("reviewer", PASSWORD, "/contexts/steady/")
    explorer.open_context("steady")
    before = drawn(explorer)

    with explorer.server.api(token) as api:
        api.post(
            "/api/v1/contexts/steady/transactions/",
            json={
                "text": "(context-tx (derive step-new (n 9)) (relate step-new follows step-4)"
                " (derive loose-new (n 9)))"
            },
        ).raise_for_status()
    explorer.page.wait_for_function(
        "() => document.getElementById('graph')._cyreg.cy.$('#f\\\\:loose-new').nonempty()"
    )
    live = drawn(explorer)
    shift = moved(before, live)
    new = {f["id"]: f for f in live["frames"]}
    gap = math.dist(
        (new["step-new"]["x"], new["step-new"]["y"]), (new["step-4"]["x"], new["step-4"]["y"])
    )
    print(f"after one frame was added: existing frames moved {shift:.1f}, new one {gap:.0f} away")
    assert shift <= 0.5
    assert gap <= 250  # beside its neighbour
    boxes = live["frames"]
    clashes = [
        (a["id"], b["id"])
        for i, a in enumerate(boxes)
        for b in boxes[i + 1 :]
        if a["x1"] < b["x2"] and b["x1"] < a["x2"] and a["y1"] < b["y2"] and b["y1"] < a["y2"]
    ]
    assert clashes == []

    explorer.page.reload()
    explorer.open_context("steady")
    reloaded = drawn(explorer)
    assert moved(live, reloaded) <= 0.5


def test_the_past_view_shows_what_existed_then_inside_the_window_with_the_banner(
    explorer: ExplorerPage, staff_user: Any
) -> None:
    context_id, _ = build("then")
    later = " ".join(f'(derive later-{n} (text "added later {n}"))' for n in range(30))
    submit_transaction(context_id, text=f"(context-tx {later})", author=Author("agent", "agent"))
    explorer.page.set_viewport_size(LAPTOP)
    explorer.login("reviewer", PASSWORD, "/contexts/then/")
    explorer.open_context("then")
    now = drawn(explorer)

    explorer.page.evaluate(
        """() => { const s = document.getElementById('tt-slider'); s.value = '1';
                   s.dispatchEvent(new Event('change')); }"""
    )
    explorer.page.wait_for_selector("body[data-as-of='1']")
    explorer.page.wait_for_selector("#tt-banner:not([hidden]) b")
    past = drawn(explorer)
    assert {f["id"] for f in past["frames"]} == {f"step-{n}" for n in range(8)} | {
        f"loose-{n}" for n in range(6)
    }
    assert past["graph_bottom"] <= past["vh"]
    assert out_of_window(past) == [] and past["notice"] == 0
    banner = explorer.page.locator("#tt-banner").bounding_box()
    assert banner is not None and banner["y"] + banner["height"] <= past["vh"]

    # Back to now: every frame where it was before the trip.
    explorer.page.click("#tt-banner button:has-text('back to now')")
    explorer.page.wait_for_selector("body[data-as-of='']")
    assert moved(now, drawn(explorer)) <= 0.5
