"""The explorer's search panel shows how many documents matched, filters them (frames or
events, a thread, transaction events) and pages with "more"."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.timeline.bulk import append_events
from memory.tx.engine import Author, submit_transaction
from tests.explorer.conftest import ExplorerPage


def wait_count(page: Any, start: str) -> None:
    """Until the panel's count (rebuilt by each search) starts with `start`."""
    page.wait_for_function(
        "(start) => (document.getElementById('search-count') || {textContent: ''})"
        ".textContent.startsWith(start)",
        arg=start,
    )


def hit_refs(page: Any) -> list[str]:
    return list(page.eval_on_selector_all("#search-hits li", "els => els.map(e => e.dataset.ref)"))


def test_search_panel_filters_and_pages_with_more(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    context = create_context("searchable")
    main = [{"kind": "tool_result", "content": f"deploy window {i}"} for i in range(24)]
    side = [{"kind": "tool_result", "content": "deploy on the side", "thread": "side"}]
    append_events(context.pk, main + side)
    submit_transaction(
        context.pk,
        text='(context-tx (reason "deploy plan") (derive deploy-plan (window friday)))',
        author=Author("agent", "agent"),
    )
    drain(context_id=context.pk)
    page = reviewer_page.page
    reviewer_page.open_context("searchable")

    page.fill("#search-input", "deploy")
    page.click("#search-form button")
    page.wait_for_selector("#search-hits li")
    assert page.inner_text("#search-count") == "26 results (showing 20)"
    assert hit_refs(page)[0] == "deploy-plan"  # the frame first
    page.click("#search-more")
    page.wait_for_function("() => document.querySelectorAll('#search-hits li').length === 26")
    assert page.inner_text("#search-count") == "26 results"
    assert page.locator("#search-more").count() == 0  # the last page
    assert len(set(hit_refs(page))) == 26

    page.select_option("#search-type", "frame")
    wait_count(page, "1 result")
    assert hit_refs(page) == ["deploy-plan"]

    page.select_option("#search-type", "event")
    page.fill("#search-thread", "side")
    page.press("#search-thread", "Enter")
    wait_count(page, "1 result")
    assert page.inner_text("#search-hits").count("thread side") == 1

    page.fill("#search-thread", "")
    page.press("#search-thread", "Enter")
    wait_count(page, "25 results")
    page.check("#search-transactions")  # the transaction that wrote deploy-plan echoes it
    wait_count(page, "26 results")
    page.click("#search-more")
    page.wait_for_function("() => document.querySelectorAll('#search-hits li').length === 26")
    assert "transaction" in page.inner_text("#search-hits")
