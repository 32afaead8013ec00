"""Property-based run of the OpenAPI schema against the live server (schemathesis): no input
it generates, valid or not, gets a 5xx or an error outside the standard shape, and no
refused input writes anything. The short version of `reliability/fuzz.py`; bounded to stay
well under three minutes."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context, issue_token
from memory.models import Context
from reliability.fuzz import fuzz
from tests.api.live import unthrottled  # noqa: F401

EXAMPLES_PER_OPERATION = 40
TIME_BUDGET_SECONDS = 120


@pytest.mark.slow
@pytest.mark.usefixtures("unthrottled")
def test_no_generated_request_gets_a_server_error(live_server: Any, transactional_db: Any) -> None:
    context = create_context("fuzz", capacity_tokens=2000)
    token = issue_token(context).raw
    # Something to find: frames, relations, events, an action.
    from memory.timeline.events import append_event, register_action
    from memory.tx.engine import submit_transaction

    append_event(context.pk, kind="tool_result", content="seed log")
    register_action(context.pk, name="deploy")
    submit_transaction(
        context.pk,
        text="(context-tx (derive release (goal v1)) (derive proof (from @e1 release) (ok yes))"
        " (relate proof supports release))",
    )

    def writes() -> tuple[int, int]:
        row = Context.objects.filter(pk=context.pk).values_list("version", "last_seq").get()
        return int(row[0]), int(row[1])

    result = fuzz(
        live_server.url,
        token,
        "fuzz",
        examples=EXAMPLES_PER_OPERATION,
        budget_seconds=TIME_BUDGET_SECONDS,
        writes=writes,
    )
    assert result["inputs_tried"] > 300
    assert not result["failures"], "\n".join(result["failures"])
    assert not result["refused_but_wrote"], "\n".join(result["refused_but_wrote"])
