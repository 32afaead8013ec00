"""The explorer's search panel says when a hit was indexed in parts: an event past
PostgreSQL's 1 MB per tsvector, whose every word is still found (issue 30)."""

from __future__ import annotations

import base64
import random
from typing import Any

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.timeline.events import append_event
from tests.explorer.conftest import ExplorerPage


def test_a_hit_indexed_in_parts_says_so(reviewer_page: ExplorerPage, transactional_db: Any) -> None:
    context = create_context("huge-log")
    blob = base64.b64encode(random.Random(30).randbytes(1_000_000)).decode()
    append_event(context.pk, kind="tool_result", content=f"{blob}\nERROR: gateway refused")
    append_event(context.pk, kind="tool_result", content="the gateway is up")
    drain(context_id=context.pk)
    page = reviewer_page.page
    reviewer_page.open_context("huge-log")

    page.fill("#search-input", "refused")
    page.click("#search-form button")
    page.wait_for_selector("#search-hits li")
    assert page.inner_text("#search-hits li .index-parts").strip().startswith("indexed in ")
    page.fill("#search-input", "gateway")
    page.click("#search-form button")
    page.wait_for_function("() => document.querySelectorAll('#search-hits li').length === 2")
    assert page.locator("#search-hits li .index-parts").count() == 1
