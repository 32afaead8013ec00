"""A person corrects memory from the side panel; each change is a transaction they author
with the base version the page showed (R40)."""

from __future__ import annotations

import json
from typing import Any

from memory.models import Frame, Relation, TransactionRecord
from tests.explorer.conftest import ExplorerPage, Team


def test_revising_a_body_as_json_shows_revision_2(reviewer_page: ExplorerPage, team: Team) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("release")
    assert page.locator("#frame-revision").inner_text() == "revision 1"

    page.click("#btn-edit")
    assert json.loads(page.locator("#edit-text").input_value()) == {
        "goal": "ship-v1",
        "stage": "waiting-for-tests",
    }
    page.fill(
        "#edit-text", json.dumps({"goal": "ship-v1", "stage": "paused", "why": "用户要求暂停"})
    )
    page.fill("#action-reason", "the user asked to pause")
    page.click("#edit-save")

    page.wait_for_function(
        "() => document.getElementById('frame-revision').textContent === 'revision 2'"
    )
    assert "用户要求暂停" in page.locator("#frame-body").inner_text()
    page.wait_for_selector("#frame-history li[data-revision='2']")
    history = page.locator("#frame-history li[data-revision='2']").inner_text()
    assert "(revise release" in history and "person:reviewer" in history
    assert "Committed as version 2" in page.locator("#action-result").inner_text()

    frame = Frame.objects.get(context_id=team.context_id, frame_id="release")
    assert (frame.revision, frame.body["stage"]) == (2, "paused")
    record = TransactionRecord.objects.get(context_id=team.context_id, committed_version=2)
    assert (record.author, record.author_kind, record.base_version) == (
        "person:reviewer",
        "person",
        1,
    )
    assert record.reason == "the user asked to pause"


def test_revising_a_body_as_s_expression_fields(reviewer_page: ExplorerPage, team: Team) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("plan")
    page.click("#btn-edit")
    page.select_option("#edit-mode", "sexpr")
    # The server's canonical printer writes the fields (plain words bare).
    assert page.locator("#edit-text").input_value() == "(steps test build pack)"
    page.fill("#edit-text", '(steps test build verify pack)\n(owner "release bot")')
    page.click("#edit-save")
    page.wait_for_function(
        "() => document.getElementById('frame-revision').textContent === 'revision 2'"
    )
    body = Frame.objects.get(context_id=team.context_id, frame_id="plan").body
    assert body == {"steps": ["test", "build", "verify", "pack"], "owner": "release bot"}


def test_relate_unrelate_retire_restore_protect_unprotect(
    reviewer_page: ExplorerPage, team: Team
) -> None:
    page = reviewer_page.page
    reviewer_page.open_context(team.slug)
    reviewer_page.click_frame("release")

    page.fill("#relate-name", "depends-on")
    page.fill("#relate-object", "plan")
    page.click("#relate-form button[type=submit]")
    page.wait_for_function(
        "() => document.getElementById('frame-relations').textContent.includes('depends-on')"
    )
    assert Relation.objects.filter(
        context_id=team.context_id, name="depends-on", removed_version__isnull=True
    ).exists()

    # Unrelate asks first: dismissing the question keeps the relation.
    unrelate = page.locator("#frame-relations li", has_text="depends-on").locator("button.unrelate")
    questions: list[str] = []

    def dismiss(dialog: Any) -> None:
        questions.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)
    unrelate.click()
    assert questions and "release depends-on plan" in questions[0]
    page.wait_for_timeout(300)
    assert "depends-on" in page.locator("#frame-relations").inner_text()
    assert TransactionRecord.objects.filter(context_id=team.context_id).count() == 2
    page.once("dialog", lambda dialog: dialog.accept())
    unrelate.click()
    page.wait_for_function(
        "() => !document.getElementById('frame-relations').textContent.includes('depends-on')"
    )

    def status_is(text: str) -> None:
        page.wait_for_function(
            "(t) => document.getElementById('frame-badges').textContent.includes(t)", arg=text
        )

    page.click("#btn-retire")
    status_is("retiring")
    page.wait_for_selector("#retirement-rows tr[data-frame='release']")
    page.fill("#action-reason", "retired by mistake")
    page.click("#btn-restore")
    status_is("active")
    # The reason went with the restore and left the box: the protect gets its own.
    assert page.locator("#action-reason").input_value() == ""
    page.click("#btn-protect")
    status_is("protected")
    reasons = list(
        TransactionRecord.objects.filter(context_id=team.context_id)
        .order_by("pk")
        .values_list("reason", flat=True)
    )
    assert reasons[-2] == "retired by mistake"
    assert reasons[-1] == "protect (by reviewer in the explorer)"
    assert page.locator("#btn-retire").is_hidden()
    page.click("#btn-unprotect")
    page.wait_for_function(
        "() => !document.getElementById('frame-badges').textContent.includes('protected')"
    )
    authors = set(
        TransactionRecord.objects.filter(
            context_id=team.context_id, committed_version__gt=1
        ).values_list("author", flat=True)
    )
    assert authors == {"person:reviewer"}
    assert TransactionRecord.objects.filter(context_id=team.context_id).count() == 7
