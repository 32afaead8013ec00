"""An open explorer page follows commits, events and ticks without a reload (R39)."""

from __future__ import annotations

import time

from tests.explorer.conftest import ExplorerPage, Team


def wait_within(page: ExplorerPage, script: str, arg: object, seconds: float) -> float:
    """Wait for `script` to hold and return how long it took after the write answered."""
    started = time.monotonic()
    page.page.wait_for_function(script, arg=arg, timeout=seconds * 1000)
    return time.monotonic() - started


def test_a_transaction_posted_through_the_api_appears_within_a_second(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    reviewer_page.open_context(team.slug)
    reviewer_page.page.evaluate("() => { window.reloadMarker = 'still here'; }")
    assert {n["id"] for n in reviewer_page.graph()} == {"release", "plan"}

    response = team.commit(
        '(context-tx (reason "tests passed") (derive test-result (tests passed))'
        " (relate test-result supports release))"
    )
    assert response.status_code == 201, response.text
    waited = wait_within(
        reviewer_page,
        "() => document.getElementById('graph')._cyreg.cy.$id('f:test-result').nonempty()",
        None,
        1.0,
    )
    assert waited < 1.0
    assert reviewer_page.page.evaluate("() => window.reloadMarker") == "still here"
    edges = {(e["source"], e["name"], e["target"]) for e in reviewer_page.edges()}
    assert ("f:test-result", "supports", "f:release") in edges
    assert reviewer_page.page.locator("#ctx-version").inner_text() == "2"
    newest = reviewer_page.page.locator("#transactions li").first.inner_text()
    assert "tests passed" in newest
    assert "release-bot (token mz_" in newest  # the token's name, as people gave it


def test_retirement_panel_counts_ticks_down_as_evaluations_arrive(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    reviewer_page.open_context(team.slug)
    assert (
        team.commit('(context-tx (reason "plan folded into release") (retire plan))').status_code
        == 201
    )

    row = "#retirement-rows tr[data-frame='plan'] td.ticks-left"
    wait_within(
        reviewer_page, "(sel) => document.querySelector(sel)?.textContent === '8'", row, 1.0
    )
    assert "plan folded into release" in reviewer_page.page.locator("#retirement-rows").inner_text()

    for expected in ("7", "6"):
        team.observe_and_evaluate(f"heartbeat before {expected}")
        waited = wait_within(
            reviewer_page,
            "([sel, n]) => document.querySelector(sel)?.textContent === n",
            [row, expected],
            1.0,
        )
        assert waited < 1.0
    assert reviewer_page.page.locator("#ctx-tick").inner_text() == "2"
    statuses = {n["id"]: n["status"] for n in reviewer_page.graph()}
    assert statuses["plan"] == "retiring"


def test_new_events_join_the_stream_live(reviewer_page: ExplorerPage, team: Team) -> None:
    reviewer_page.open_context(team.slug)
    team.client.post(
        f"/api/v1/contexts/{team.slug}/events/",
        json={"kind": "user_message", "content": "please pause the release"},
    ).raise_for_status()
    wait_within(
        reviewer_page,
        "() => document.getElementById('events').textContent.includes('please pause the release')",
        None,
        1.0,
    )
