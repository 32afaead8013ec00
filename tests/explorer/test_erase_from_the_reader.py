"""Erasing from the explorer (R64): the event reader's "erase…" asks for a reason and a
confirmation, then the text is masked; a person without the permission is refused."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.models import Permission

from memory.contexts import create_context
from memory.models import Erasure, Event
from memory.timeline.events import append_event
from memory.tx.engine import Author, submit_transaction
from tests.explorer.conftest import ExplorerPage

SECRET = "passport X1234567 of Ada"


def _story() -> Any:
    context = create_context("erasable")
    log = append_event(context.pk, kind="user_message", content=SECRET).event
    submit_transaction(
        context.pk,
        text=f"(context-tx (derive person (from {log.ref}) (name ada)))",
        author=Author("agent", "agent"),
    )
    return context, log


def _erase_in_reader(page: ExplorerPage, answers: list[str], ref: str) -> None:
    replies = iter(answers)

    def answer(dialog: Any) -> None:
        reply = next(replies)
        if reply == "cancel":
            dialog.dismiss()
        else:
            dialog.accept(reply)

    page.page.on("dialog", answer)
    page.open_context("erasable")
    page.click_frame("person")
    page.page.click(f"#frame-sources button:text('{ref}')")
    page.page.wait_for_function(
        "() => document.getElementById('reader-progress').textContent.startsWith('showing')"
    )
    page.page.click("#reader-erase")


def test_the_reader_erases_after_a_reason_and_a_confirmation(
    reviewer_page: ExplorerPage, staff_user: Any, transactional_db: Any
) -> None:
    context, log = _story()
    staff_user.user_permissions.add(Permission.objects.get(codename="add_erasure"))
    _erase_in_reader(reviewer_page, ["subject request 7", "yes"], log.ref)
    reviewer_page.page.wait_for_function(
        "() => document.getElementById('reader-progress').textContent.startsWith('erased')"
    )
    assert SECRET not in reviewer_page.page.locator("#reader-text").inner_text()
    assert SECRET not in Event.objects.get(context=context, seq=log.seq).content
    assert Erasure.objects.get(context=context).reason == "subject request 7"


def test_the_reader_refuses_a_person_without_the_permission(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    context, log = _story()
    _erase_in_reader(reviewer_page, ["because", "yes"], log.ref)
    reviewer_page.page.wait_for_function(
        "() => document.getElementById('reader-progress').textContent.startsWith('not erased')"
    )
    assert Event.objects.get(context=context, seq=log.seq).content == SECRET
    assert not Erasure.objects.exists()
