"""What the model saw at a tick, and the graph as it was at an earlier version."""

from __future__ import annotations

from tests.explorer.conftest import ExplorerPage, Team


def travel_to(page: ExplorerPage, version: int) -> None:
    page.page.eval_on_selector(
        "#tt-slider",
        "(slider, v) => { slider.value = String(v); slider.dispatchEvent(new Event('change')); }",
        version,
    )
    page.page.wait_for_function(
        "(v) => document.body.dataset.asOf === String(v)", arg=version, timeout=10_000
    )


def test_the_evaluations_panel_shows_the_compiled_input_linked_to_the_graph(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    evaluation = team.observe_and_evaluate("the release branch is green")
    reviewer_page.open_context(team.slug)
    row = page.locator(f"#evaluations li[data-evaluation='{evaluation['id']}']")
    assert f"tick {evaluation['tick']}" in row.inner_text()
    row.locator("button").click()

    text = page.locator("#evaluation-text")
    text.wait_for()
    shown = text.inner_text()
    assert shown.strip() == evaluation["text"].strip()  # exactly what the model was given
    assert "the release branch is green" in shown
    # release is linked in its frame header and in the relations section; the first opens it
    text.locator("button[data-ref='release']").first.click()
    page.wait_for_function("() => document.getElementById('frame-title').textContent === 'release'")
    assert not page.locator("#evaluation-dialog").is_visible()


def test_time_travel_shows_an_old_body_and_what_a_version_changed(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    assert team.commit(
        '(context-tx (reason "tests passed") (revise release (goal ship-v1) (stage packaging)))'
    ).is_success
    assert team.commit(
        '(context-tx (reason "note") (derive test-result (tests passed)))'
    ).is_success
    assert team.commit('(context-tx (reason "keep it") (protect release))').is_success
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("release")
    assert "packaging" in page.locator("#frame-body").inner_text()

    travel_to(reviewer_page, 1)
    page.wait_for_function(
        "() => document.getElementById('frame-body').textContent.includes('waiting-for-tests')"
    )
    assert "revision 1" in page.locator("#frame-badges").inner_text()
    assert {n["id"] for n in reviewer_page.graph()} == {"release", "plan"}
    assert page.locator("#btn-retire").is_hidden()  # no corrections in the past

    # The highlight is the server's diff between the version before and the one shown.
    with page.expect_request(lambda r: "/diff/?from=1&to=2" in r.url):
        travel_to(reviewer_page, 2)
    page.wait_for_function(
        "() => document.getElementById('frame-body').textContent.includes('packaging')"
    )
    page.wait_for_function(
        "() => document.getElementById('tt-banner').textContent.includes('Viewing version 2')"
    )
    assert {n["id"] for n in reviewer_page.graph("node.changed")} == {"release"}
    assert not reviewer_page.graph("node.added")
    banner = page.locator("#tt-banner").inner_text()
    assert "Viewing version 2" in banner and "tests passed" in banner
    assert "release (revision 1 → 2)" in banner

    with page.expect_request(lambda r: "/diff/?from=2&to=3" in r.url):
        travel_to(reviewer_page, 3)
    page.wait_for_function(
        "() => document.getElementById('tt-banner').textContent.includes('Viewing version 3')"
    )
    assert {n["id"] for n in reviewer_page.graph("node.added")} == {"test-result"}
    assert not reviewer_page.graph("node.changed")
    assert "test-result (new)" in page.locator("#tt-banner").inner_text()

    page.click("#tt-banner button:text('back to now')")
    page.wait_for_function("() => document.body.dataset.asOf === ''")
    assert "test-result" in {n["id"] for n in reviewer_page.graph()}
    assert not reviewer_page.graph("node.added") and not reviewer_page.graph("node.changed")
