"""A current picture of the explorer on the demo context.

Saved to test-artifacts/explorer.png (ignored by git) so a test run never dirties the tree;
copy it to docs/explorer.png, which the README shows, when the page changes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.demo.loader import load_demo
from tests.explorer.conftest import REPO, ExplorerPage


def test_screenshot_of_the_demo_explorer(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    explorer.click_frame("release-procedure")
    explorer.page.evaluate(
        "() => { document.getElementById('graph')._cyreg.cy.fit(undefined, 30); }"
    )
    target = REPO / "test-artifacts" / "explorer.png"
    target.parent.mkdir(exist_ok=True)
    explorer.page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 50_000
