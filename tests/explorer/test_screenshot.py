"""Current pictures of the explorer at 1280×720: the demo, time travel, an empty context.

Saved to test-artifacts/ (ignored by git) so a test run never dirties the tree; copy them to
docs/ (docs/explorer.png is the one the README shows) when the page changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.contexts import create_context
from memory.demo.player import load_demo
from tests.explorer.conftest import REPO, ExplorerPage

ARTIFACTS = REPO / "test-artifacts"


def click_node(explorer: ExplorerPage, frame_id: str) -> None:
    """Click a frame where it is drawn, without moving the view."""
    box = explorer.page.locator("#graph").bounding_box()
    assert box is not None
    at = explorer.page.evaluate(
        "(id) => document.getElementById('graph')._cyreg.cy.getElementById('f:' + id)"
        ".renderedPosition()",
        frame_id,
    )
    explorer.page.mouse.click(box["x"] + at["x"], box["y"] + at["y"])
    explorer.page.wait_for_selector("#frame-history li[data-revision]")


def test_screenshots_of_the_explorer(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    page = explorer.page
    page.set_viewport_size({"width": 1280, "height": 720})
    login = load_demo(tmp_path)
    create_context("empty", name="A context no agent has used yet")
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    click_node(explorer, "release-procedure")
    page.mouse.move(0, 0)  # no hover tooltip in the picture
    page.screenshot(path=str(ARTIFACTS / "explorer.png"))

    # Time travel to the induction (version 43): the new procedure and the two cases it retired.
    page.eval_on_selector(
        "#tt-slider", "(s) => { s.value = '43'; s.dispatchEvent(new Event('change')); }"
    )
    page.wait_for_function("() => document.body.dataset.asOf === '43'")
    page.wait_for_selector("#tt-banner .tt-list")
    page.mouse.move(0, 0)
    page.screenshot(path=str(ARTIFACTS / "explorer-timetravel.png"))

    page.goto(explorer.server.url + "/contexts/empty/")
    explorer.open_context("empty")
    assert page.locator("#graph-empty").is_visible()
    page.screenshot(path=str(ARTIFACTS / "explorer-empty.png"))

    page.goto(explorer.server.url + "/")
    page.screenshot(path=str(ARTIFACTS / "explorer-home.png"))
    for name in (
        "explorer.png",
        "explorer-timetravel.png",
        "explorer-empty.png",
        "explorer-home.png",
    ):
        assert (ARTIFACTS / name).stat().st_size > 20_000
