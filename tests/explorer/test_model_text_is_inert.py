"""Everything a model wrote is shown as text: no HTML or script from a frame, an event, a
transaction or a search snippet ever runs (R39)."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.search.indexer import drain
from memory.timeline.events import append_event
from memory.tx.engine import Author, submit_transaction
from tests.explorer.conftest import ExplorerPage

IMG = '<img src=x onerror="window.pwned=1">'
SCRIPT = "<script>window.pwned=2</script>"


def test_html_in_frames_events_and_transactions_stays_text(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    context = create_context("hostile")
    log = append_event(context.pk, kind="tool_result", content=f"build log {IMG} {SCRIPT}").event
    submit_transaction(
        context.pk,
        data={
            "reason": f"digest {IMG}",
            "ops": [
                {
                    "op": "derive",
                    "id": "payload",
                    "from": [log.ref],
                    "body": {"title": IMG, "notes": [SCRIPT, {"deep": IMG}]},
                }
            ],
        },
        author=Author("agent", "agent"),
    )
    drain(context_id=context.pk)
    page = reviewer_page.page
    page.on("dialog", lambda dialog: dialog.dismiss())
    reviewer_page.open_context("hostile")
    reviewer_page.click_frame("payload")

    body = page.locator("#frame-body").inner_text()
    assert IMG in body and SCRIPT in body
    assert page.locator("#frame-history").inner_text().count("onerror") >= 2
    assert IMG in page.locator("#transactions").inner_text()
    assert IMG in page.locator("#events").inner_text()

    page.click(f"#frame-sources button:text('{log.ref}')")
    page.wait_for_function(
        "() => document.getElementById('reader-text').textContent.includes('<script>')"
    )
    page.keyboard.press("Escape")

    page.fill("#search-input", "onerror")
    page.click("#search-form button")
    page.wait_for_selector("#search-results li")
    assert "onerror" in page.locator("#search-results").inner_text()

    page.wait_for_timeout(300)  # give any injected handler the chance to fire
    assert page.evaluate("() => window.pwned") is None
    assert page.locator("main img").count() == 0
    scripts = page.evaluate("() => [...document.scripts].map(s => s.src || 'inline:' + s.type)")
    assert all(src.startswith("http") or src == "inline:application/json" for src in scripts), (
        scripts
    )
