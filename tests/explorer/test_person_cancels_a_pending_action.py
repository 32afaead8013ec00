"""A person cancels a pending action in the explorer (R59): the action's row in the events
panel has a cancel button; the reason reaches the model as the cancellation's text."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context
from memory.models import Event
from memory.timeline.events import register_action
from tests.explorer.conftest import ExplorerPage


def test_the_cancel_button_cancels_with_the_reason(
    reviewer_page: ExplorerPage, transactional_db: Any
) -> None:
    context = create_context("stuck-action")
    action = register_action(context.pk, name="ship", arguments={"order": 17}).event
    page = reviewer_page.page
    page.on("dialog", lambda dialog: dialog.accept("carrier on strike"))
    reviewer_page.open_context("stuck-action")
    page.click(f"#events li[data-ref='{action.ref}'] button.cancel-action")
    page.wait_for_function('() => !document.querySelector("#events button.cancel-action")')
    action.refresh_from_db()
    assert action.request_state == "delivered"
    cancellation = Event.objects.get(context=context, kind="tool_result")
    assert cancellation.content.endswith(": carrier on strike")
    assert cancellation.content.startswith("cancelled by person:")
    assert reviewer_page.errors == []
