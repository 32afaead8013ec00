"""The demo context's graph shows its frames with the right statuses (R39, R42)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory.demo.player import load_demo
from tests.explorer.conftest import ExplorerPage


def test_demo_graph_colours_frames_by_status_and_marks_protected_ones(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/")
    assert explorer.page.locator("#context-list a", has_text="demo").count() == 1

    explorer.page.click("#context-list a:text('demo')")
    explorer.open_context("demo")
    frames = {node["id"]: node for node in explorer.graph()}

    assert frames["release"]["status"] == "active"
    assert frames["release"]["label"] == "release"
    assert frames["test-result"]["status"] == "active"
    assert frames["release-procedure"]["status"] == "active"
    # Retired at once by the successor rule (R17), and by expiry of its grace window.
    assert frames["release-case-a"]["status"] == "retired"
    assert frames["release-case-b"]["status"] == "retired"
    assert frames["recent-changes"]["status"] == "retired"
    assert frames["changelog-draft"]["status"] == "retiring"
    assert "retiring" in frames["changelog-draft"]["classes"]
    assert frames["user-preferences"]["protected"]
    assert not frames["release"]["protected"]

    colours = explorer.page.evaluate(
        """() => { const cy = document.getElementById('graph')._cyreg.cy;
            const c = (id) => cy.getElementById('f:' + id).style('background-color');
            return [c('release'), c('changelog-draft'), c('release-case-a')]; }"""
    )
    assert len(set(colours)) == 3, colours


def test_demo_graph_labels_relations_and_shows_event_leaves_on_demand(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")

    relations = {
        (e["source"], e["name"], e["target"]) for e in explorer.edges() if e["kind"] == "relation"
    }
    assert ("f:test-result", "supports", "f:release") in relations
    assert ("f:release-procedure", "supersedes", "f:release-case-a") in relations
    assert ("f:release-procedure", "supersedes", "f:release-case-b") in relations
    assert explorer.graph("node.event") == []

    explorer.page.check("#toggle-events")
    leaves = {node["id"] for node in explorer.graph("node.event")}
    assert "@e42" in leaves
    sources = {(e["source"], e["target"]) for e in explorer.edges() if e["kind"] == "source"}
    assert ("f:test-result", "e:@e42") in sources
    assert ("f:release-procedure", "f:release-case-a") in sources

    # The retirement panel lists the frame inside its window with ticks left (R14).
    row = explorer.page.locator("#retirement-rows tr[data-frame='changelog-draft']")
    assert row.locator("td.ticks-left").inner_text() == "5"


def test_large_event_is_read_in_chunks(
    explorer: ExplorerPage, transactional_db: Any, tmp_path: Path
) -> None:
    login = load_demo(tmp_path)
    explorer.login(login.username, login.password, "/contexts/demo/")
    explorer.open_context("demo")
    explorer.page.check("#toggle-events")
    explorer.click_frame("test-result")
    explorer.page.click("#frame-sources button:text('@e42')")

    progress = explorer.page.locator("#reader-progress")
    progress.wait_for()
    explorer.page.wait_for_function(
        "() => document.getElementById('reader-progress').textContent.startsWith('showing 4096 of')"
    )
    first = explorer.page.locator("#reader-text").inner_text()
    assert first.startswith("> shop-web@1.0.0 test")
    explorer.page.click("#reader-more")
    explorer.page.wait_for_function(
        "() => document.getElementById('reader-progress').textContent.startsWith('showing 8192 of')"
    )
    assert "retired" in explorer.page.locator("#reader-meta").inner_text()
