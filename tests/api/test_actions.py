"""POST /api/v1/contexts/{slug}/actions/ : register an action; the maintenance gate (R25)."""

from __future__ import annotations

from memory.contexts import create_context, issue_token
from memory.models import Event
from tests.api.conftest import Api, error_of


def test_registering_an_action_returns_the_open_action_event(api: Api) -> None:
    response = api.post("actions/", {"name": "npm test", "arguments": {"cwd": "web"}})
    assert response.status_code == 201
    body = response.json()
    assert body["kind"] == "action"
    assert body["request"] == "open"
    assert body["payload"] == {"name": "npm test", "arguments": {"cwd": "web"}}
    result = api.observe("passed", kind="tool_result", delivers=[body["ref"]])
    assert result["delivers"] == [body["ref"]]


def test_retry_with_the_key_returns_the_first_action(api: Api) -> None:
    first = api.post("actions/", {"name": "deploy", "idempotency_key": "d-1"})
    again = api.post("actions/", {"name": "deploy", "idempotency_key": "d-1"})
    assert (first.status_code, again.status_code) == (201, 200)
    assert again.json()["ref"] == first.json()["ref"]
    assert Event.objects.filter(kind="action").count() == 1


def test_in_maintenance_a_new_action_is_409(db) -> None:
    context = create_context("tiny", capacity_tokens=100)
    api = Api("tiny", issue_token(context).raw)
    api.observe("word " * 400)
    assert api.get().json()["pressure"]["level"] == "maintenance"
    response = api.post("actions/", {"name": "deploy"})
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "maintenance_required"
    assert not Event.objects.filter(kind="action").exists()


def test_bad_action_bodies_are_400(api: Api) -> None:
    for body in ({}, {"name": ""}, {"name": 3}, {"name": "x" * 201}, {"name": "x", "why": 1}):
        response = api.post("actions/", body)
        assert response.status_code == 400, body
        assert error_of(response)["code"] == "invalid_request"
