"""User requests stay until delivered (R3, R26)."""

from __future__ import annotations

import pytest

from memory.errors import RuleViolation


def test_open_user_request_cannot_be_retired(release_team):
    agent = release_team
    request = agent.observe("先暂停发布", kind="user_message")
    with pytest.raises(RuleViolation) as caught:
        agent.commit(f"(context-tx (retire {request}))")
    assert caught.value.code == "request_pending"
    assert caught.value.details[0]["ref"] == request


def test_request_can_be_retired_after_a_delivering_reply(release_team):
    agent = release_team
    request = agent.observe("先暂停发布", kind="user_message")
    agent.observe("已暂停发布。", kind="agent_message", delivers=[request])
    receipt = agent.commit(f"(context-tx (retire {request}))")
    assert receipt["results"][0]["refs"][0]["status"] == "retired"


def test_open_request_is_listed_in_compiled_state(release_team):
    agent = release_team
    request = agent.observe("please ship v1", kind="user_message")
    result = agent.evaluate()
    assert [r["ref"] for r in result["context"]["state"]["open_requests"]] == [request]
    assert (
        f"open requests:\n  {request} thread=main · you have sent nothing on this thread"
        in result["text"]
    )


def test_delivering_an_unknown_ref_is_refused(release_team):
    with pytest.raises(RuleViolation) as caught:
        release_team.observe("done", kind="agent_message", delivers=["@e77"])
    assert caught.value.code == "unknown_ref"
