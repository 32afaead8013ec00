"""The explorer's search panel names the turn a reply answers when the reply was found
through words it borrowed from that turn (reply context): the hit alone would not show why
it matched."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.timeline.events import append_event
from tests.explorer.conftest import ExplorerPage


def test_a_reply_found_by_borrowed_words_names_its_turn(
    reviewer_page: ExplorerPage, transactional_db: Any, settings: Any
) -> None:
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    context = create_context("codename")
    said = append_event(context.pk, kind="user_message", content="My codename is Snodgrassius")
    append_event(context.pk, kind="agent_message", content="Noted, thank you")
    drain(context_id=context.pk)
    page = reviewer_page.page
    reviewer_page.open_context("codename")

    page.fill("#search-input", "Snodgrassius")
    page.click("#search-form button")
    page.wait_for_function("() => document.querySelectorAll('#search-hits li').length === 2")
    assert page.locator("#search-hits li .answers").count() == 1
    assert page.inner_text("#search-hits li .answers").strip() == f"answers {said.event.ref}"
