"""The Python client cancels a pending action (POST actions/{seq}/cancel/, R59): the answer
names the cancellation and the action, a second cancel is the 409 `action_not_pending`, an
event that is no action the 422 `not_an_action`, and a malformed ref never leaves the client."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from memory.contexts import create_context, issue_token
from tests.api.live import unthrottled  # noqa: F401

pytestmark = pytest.mark.usefixtures("unthrottled")


@pytest.fixture
def mz(live_server: Any, transactional_db: Any) -> Any:
    from morphz_client import MorphzClient

    context = create_context("cancel-ctx")
    sent: list[str] = []
    http = httpx.Client(
        base_url=live_server.url,
        event_hooks={"request": [lambda request: sent.append(request.url.path)]},
    )
    client = MorphzClient(live_server.url, issue_token(context).raw, http=http)
    client.sent = sent
    yield client
    client.close()
    http.close()


def test_an_action_is_cancelled_once(mz: Any) -> None:
    from morphz_client import ConflictError, RuleViolationError

    action = mz.register_action("deploy", {"env": "staging"})
    assert mz.events(status="open")["events"][0]["ref"] == action["ref"]
    answer = mz.cancel_action(action["ref"], reason="customer withdrew")
    assert answer["cancels"] == action["ref"]
    assert answer == {"ref": answer["ref"], "cancels": action["ref"]}
    assert mz.events(status="open")["events"] == []
    cancellation = mz.read_event(answer["ref"])
    assert cancellation["kind"] == "tool_result"
    assert cancellation["content"].endswith(": customer withdrew")
    with pytest.raises(ConflictError) as again:
        mz.cancel_action(action["seq"])  # the seq works as the ref does
    assert again.value.status == 409 and again.value.code == "action_not_pending"
    with pytest.raises(RuleViolationError) as not_action:
        mz.cancel_action(answer["ref"])
    assert not_action.value.status == 422 and not_action.value.code == "not_an_action"
    with pytest.raises(RuleViolationError) as unknown:
        mz.cancel_action("@e999")
    assert unknown.value.code == "unknown_ref"


def test_without_a_reason_the_body_is_empty_and_the_action_cancelled(mz: Any) -> None:
    action = mz.register_action("deploy")
    assert mz.cancel_action(action["seq"])["cancels"] == action["ref"]


@pytest.mark.parametrize("ref", [True, 0, -1, None, 1.5, "@e0", "e5", "@e1/../../"])
def test_a_malformed_ref_is_refused_before_sending(mz: Any, ref: Any) -> None:
    from morphz_client import InvalidRefError

    sent = len(mz.sent)
    with pytest.raises(InvalidRefError):
        mz.cancel_action(ref)
    assert len(mz.sent) == sent
