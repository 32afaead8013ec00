"""`POST actions/{seq}/cancel/`: a person (the explorer, signed in) or an agent token
cancels a pending action; the cancellation delivers it (R59)."""

from __future__ import annotations

import json
from typing import Any

from rest_framework.test import APIClient

from memory.models import Event
from tests.api.conftest import Api, error_of


def _pending_action(api: Api) -> str:
    response = api.post("replies/", {"tool_calls": [{"id": "a", "name": "ship", "arguments": {}}]})
    assert response.status_code == 200, response.content
    return str(response.json()["actions"][0]["ref"])


def test_a_person_cancels_a_pending_action(api: Api, staff: Any) -> None:
    action = _pending_action(api)
    person = APIClient(enforce_csrf_checks=False)
    person.force_login(staff)
    response = person.post(
        f"/api/v1/contexts/alpha/actions/{action[2:]}/cancel/",
        json.dumps({"reason": "the carrier is on strike"}),
        content_type="application/json",
    )
    assert response.status_code == 201, response.content
    assert response.json()["cancels"] == action
    cancellation = Event.objects.get(context__slug="alpha", seq=int(response.json()["ref"][2:]))
    assert cancellation.content == "cancelled by person:ada: the carrier is on strike"
    assert Event.objects.get(context__slug="alpha", seq=int(action[2:])).request_state == (
        "delivered"
    )
    again = api.post(f"actions/{action[2:]}/cancel/", {})
    assert again.status_code == 409 and error_of(again)["code"] == "action_not_pending"


def test_cancelling_what_is_not_a_pending_action_is_refused(api: Api) -> None:
    request = api.post("events/", {"kind": "user_message", "content": "hi"}).json()["ref"]
    response = api.post(f"actions/{request[2:]}/cancel/", {})
    assert response.status_code == 422 and error_of(response)["code"] == "not_an_action"
    response = api.post("actions/999/cancel/", {})
    assert response.status_code == 422 and error_of(response)["code"] == "unknown_ref"
    action = _pending_action(api)
    response = api.post(f"actions/{action[2:]}/cancel/", {"reason": 7})
    assert response.status_code == 400
    response = api.post(f"actions/{action[2:]}/cancel/", {"why": "x"})
    assert response.status_code == 400
    assert Event.objects.get(context__slug="alpha", seq=int(action[2:])).request_state == "open"
