"""Bugs a new person found trying the explorer: the body editor wrote more than a body and
kept only the last of a repeated JSON key; the search panel appended a page twice and lost
its filters to a bad thread."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.models import Frame, TransactionRecord
from memory.search.indexer import drain
from memory.timeline.bulk import append_events
from tests.explorer.conftest import ExplorerPage, Team
from tests.explorer.test_search_panel import hit_refs, wait_count


def save_body(explorer: ExplorerPage, mode: str, text: str) -> str:
    """Edit `release` in `mode`, save `text`, and return the refusal shown."""
    page = explorer.page
    explorer.click_frame("release")
    page.click("#btn-edit")
    page.select_option("#edit-mode", mode)
    page.fill("#edit-text", text)
    page.click("#edit-save")
    page.wait_for_selector("#action-result.error")
    return str(page.inner_text("#action-result"))


def test_edit_body_text_cannot_close_the_revise(reviewer_page: ExplorerPage, team: Team) -> None:
    team.commit('(context-tx (reason "web") (derive release-web (goal site)))').raise_for_status()
    reviewer_page.open_context(team.slug)
    shown = save_body(reviewer_page, "sexpr", "(goal ship-v4)) (retire release-web")
    assert "parse_error" in shown and "line 1, column 15" in shown

    frames = {f.frame_id: f for f in Frame.objects.filter(context_id=team.context_id)}
    assert (frames["release"].revision, frames["release"].body["goal"]) == (1, "ship-v1")
    assert frames["release-web"].status == "active"
    assert TransactionRecord.objects.filter(context_id=team.context_id).count() == 2

    # A body that is only fields still saves, as one revise of the frame being edited.
    page = reviewer_page.page
    page.fill("#edit-text", "(goal ship-v4)\n(stage paused)")
    page.click("#edit-save")
    page.wait_for_function(
        "() => document.getElementById('frame-revision').textContent === 'revision 2'"
    )
    frame = Frame.objects.get(context_id=team.context_id, frame_id="release")
    assert frame.body == {"goal": "ship-v4", "stage": "paused"}
    record = TransactionRecord.objects.get(context_id=team.context_id, committed_version=3)
    assert record.text.count("(revise") == 1 and "retire" not in record.text


def test_edit_body_json_refuses_a_repeated_key(reviewer_page: ExplorerPage, team: Team) -> None:
    reviewer_page.open_context(team.slug)
    shown = save_body(reviewer_page, "json", '{"goal":"ship-v1","goal":"ship-v2"}')
    assert "'goal' twice" in shown
    frame = Frame.objects.get(context_id=team.context_id, frame_id="release")
    assert (frame.revision, frame.body["goal"]) == (1, "ship-v1")


def searchable(name: str, count: int) -> None:
    context = create_context(name)
    events = [{"kind": "tool_result", "content": f"deploy window {i}"} for i in range(count)]
    append_events(context.pk, events)
    drain(context_id=context.pk)


def test_more_clicked_twice_adds_the_page_once(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    searchable("paged", 41)
    page = reviewer_page.page
    reviewer_page.open_context("paged")
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/search/?" in r.url else None)
    page.fill("#search-input", "deploy")
    page.click("#search-form button")
    wait_count(page, "41 results (showing 20)")

    # Two clicks on the same button before the page arrives (a quick double click).
    page.evaluate(
        "() => { const b = document.getElementById('search-more'); b.click(); b.click(); }"
    )
    wait_count(page, "41 results (showing 40)")
    page.click("#search-more")
    wait_count(page, "41 results")
    page.wait_for_function("() => !document.getElementById('search-more')")
    refs = hit_refs(page)
    assert len(refs) == len(set(refs)) == 41
    assert page.inner_text("#search-count") == "41 results"
    # The double click asked for the second page once: one request per further page.
    further = [url for url in asked if "cursor=" in url]
    assert len(further) == len(set(further)) == 2


def test_a_bad_thread_filter_can_be_corrected(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    searchable("filtered", 3)
    page = reviewer_page.page
    reviewer_page.open_context("filtered")
    page.fill("#search-input", "deploy")
    page.click("#search-form button")
    wait_count(page, "3 results")

    page.fill("#search-thread", "no such")
    page.press("#search-thread", "Enter")
    page.wait_for_selector("#search-status.error:not([hidden])")
    assert "thread" in page.inner_text("#search-status")
    assert page.get_attribute("#search-thread", "aria-invalid") == "true"
    assert page.input_value("#search-thread") == "no such"  # the inputs stay
    assert page.locator("#search-type").count() == 1

    page.fill("#search-thread", "main")
    page.press("#search-thread", "Enter")
    wait_count(page, "3 results")
    assert page.locator("#search-status").is_hidden()
    assert len(hit_refs(page)) == 3
