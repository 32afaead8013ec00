"""Property-based run of the OpenAPI schema against the live server (schemathesis): no input
it generates, valid or not, gets a 5xx. Bounded to stay well under three minutes."""

from __future__ import annotations

import contextlib
import time
from typing import Any

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

from memory.contexts import create_context, issue_token
from tests.api.live import unthrottled  # noqa: F401

EXAMPLES_PER_OPERATION = 40
TIME_BUDGET_SECONDS = 120


@pytest.mark.slow
@pytest.mark.usefixtures("unthrottled")
def test_no_generated_request_gets_a_server_error(live_server: Any, transactional_db: Any) -> None:
    context = create_context("fuzz", capacity_tokens=2000)
    token = issue_token(context).raw
    headers = {"Authorization": f"Bearer {token}"}
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

    schema = schemathesis.openapi.from_url(f"{live_server.url}/api/schema/")
    deadline = time.monotonic() + TIME_BUDGET_SECONDS
    failures: list[str] = []
    calls = 0
    for result in schema.get_all_operations():
        operation = result.ok()  # type: ignore[union-attr]
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):

            @settings(
                max_examples=EXAMPLES_PER_OPERATION,
                deadline=None,
                database=None,
                derandomize=True,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            @given(case=operation.as_strategy(generation_mode=mode))
            def run(case: Any) -> None:
                nonlocal calls
                if time.monotonic() > deadline:
                    return
                # Mostly our own context, so requests get past the access check.
                if case.path_parameters and "slug" in case.path_parameters and calls % 5:
                    case.path_parameters["slug"] = "fuzz"
                calls += 1
                response = case.call(base_url=live_server.url, headers=headers, timeout=10)
                problem = _problem(response)
                if problem:
                    failures.append(
                        f"{case.method} {case.formatted_path} -> {problem}: "
                        f"query={case.query} headers={case.headers} body={case.body!r:.300}"
                    )

            # Negative mode cannot break an operation that takes no input at all.
            with contextlib.suppress(Unsatisfiable):
                run()
    assert calls > 300
    assert not failures, "\n".join(failures[:20])


def _problem(response: Any) -> str | None:
    """What is wrong with a response: a 5xx, or an error not in the standard shape."""
    if response.status_code >= 500:
        return f"{response.status_code} {response.text[:200]}"
    if response.status_code < 400:
        return None
    try:
        body = response.json()
    except ValueError:
        return f"{response.status_code} not JSON: {response.text[:200]!r}"
    if set(body) != {"error"} or set(body["error"]) != {"code", "message", "details"}:
        return f"{response.status_code} not the error shape: {body}"
    return None
