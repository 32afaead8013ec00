"""An edit made from a page that showed an older version is refused and the conflict is
shown plainly, naming what changed (R20, R40)."""

from __future__ import annotations

from memory.models import Frame
from tests.explorer.conftest import ExplorerPage, Team


def test_saving_over_a_newer_revision_shows_the_conflict(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("release")
    page.click("#btn-edit")
    assert page.locator("#edit-base").inner_text() == "1"

    # Meanwhile the agent revises the same frame.
    response = team.commit(
        '(context-tx (base-version 1) (reason "pause requested")'
        " (revise release (goal ship-v1) (stage paused)))"
    )
    assert response.status_code == 201, response.text
    page.wait_for_selector("#edit-stale:not([hidden])")
    assert "now revision 2" in page.locator("#edit-stale").inner_text()

    page.fill("#edit-text", '{"goal": "ship-v1", "stage": "packaging"}')
    page.click("#edit-save")
    result = page.locator("#action-result.conflict")
    result.wait_for()
    text = result.inner_text()
    assert "Conflict" in text and "Nothing was written" in text
    assert "release (frame) changed in version 2, now revision 2" in text

    frame = Frame.objects.get(context_id=team.context_id, frame_id="release")
    assert (frame.revision, frame.body["stage"]) == (2, "paused")

    # Re-reading opens the editor on the current revision, and saving then works.
    page.click("#action-result button")
    page.wait_for_function("() => document.getElementById('edit-base').textContent === '2'")
    page.fill("#edit-text", '{"goal": "ship-v1", "stage": "paused", "note": "checked"}')
    page.click("#edit-save")
    page.wait_for_function(
        "() => document.getElementById('frame-revision').textContent === 'revision 3'"
    )
