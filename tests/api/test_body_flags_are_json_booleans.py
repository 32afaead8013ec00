"""A boolean flag in a JSON body is a JSON `true` or `false`: `"true"`, `"yes"`, `1` or
`0` are 400 `invalid_flag` naming the flag (docs/rest.md: text and numbers are not
coerced), and nothing is written; in a query string the usual spellings still work."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Evaluation, Event
from tests.api.conftest import Api, error_of

NOT_BOOLEANS = ["true", "yes", "1", 1, 0, None]


@pytest.mark.parametrize("value", NOT_BOOLEANS)
@pytest.mark.parametrize("flag", ["continuation", "include_instructions"])
def test_an_evaluation_flag_is_a_json_boolean(api: Api, flag: str, value: Any) -> None:
    api.observe("pending")
    response = api.post("evaluations/", {flag: value})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_flag"
    assert [d["field"] for d in error["details"]] == [flag]
    assert not Evaluation.objects.exists()


@pytest.mark.parametrize("value", NOT_BOOLEANS)
@pytest.mark.parametrize("flag", ["include_bodies", "include_events", "as_observation"])
def test_a_recall_flag_is_a_json_boolean(api: Api, flag: str, value: Any) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    before = Event.objects.count()
    response = api.post("recall/", {"frame_id": "goal", flag: value})
    assert response.status_code == 400, response.json()
    error = error_of(response)
    assert error["code"] == "invalid_flag"
    assert [d["field"] for d in error["details"]] == [flag]
    assert Event.objects.count() == before


def test_json_booleans_work(api: Api) -> None:
    api.commit("(context-tx (derive goal (state open)))")
    answer = api.post("recall/", {"frame_id": "goal", "include_bodies": False}).json()
    assert "body" not in answer["nodes"][0]
    assert api.post("evaluations/", {"continuation": True}).json()["continuation"] is True


@pytest.mark.parametrize(("value", "removed"), [("true", True), ("yes", True), ("0", False)])
def test_a_query_flag_takes_the_usual_spellings(api: Api, value: str, removed: bool) -> None:
    api.commit("(context-tx (derive a (n 1)) (derive b (n 2)) (relate a supports b))")
    api.commit("(context-tx (unrelate a supports b))")
    response = api.get("relations/", {"include_removed": value})
    assert response.status_code == 200, response.json()
    assert len(response.json()["relations"]) == (1 if removed else 0)
