"""POST /api/v1/contexts/{slug}/transactions/ : text or JSON form, receipts and rejections
(R9-R11, R19, R20)."""

from __future__ import annotations

from typing import Any

from memory.contexts import create_context, issue_token
from memory.models import ApiToken, Frame, TransactionRecord
from tests.api.conftest import Api, error_of

TEXT = """(context-tx
  (base-version 0)
  (reason "tests absorbed")
  (derive test-result (from @e1) (tests passed) (suite (count 1600) (failed 0)))
  (retire @e1))"""

JSON_FORM = {
    "base_version": 0,
    "reason": "tests absorbed",
    "ops": [
        {
            "op": "derive",
            "id": "test-result",
            "from": ["@e1"],
            "body": {"tests": "passed", "suite": {"count": "1600", "failed": "0"}},
        },
        {"op": "retire", "refs": ["@e1"]},
    ],
}


def _fresh(slug: str) -> Api:
    context = create_context(slug)
    api = Api(slug, issue_token(context).raw)
    api.observe("suite: 1600 passed")
    return api


def _without_ids(receipt: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in receipt.items() if k != "transaction"}


def test_text_and_json_forms_give_the_same_receipt(db) -> None:
    text_api, json_api = _fresh("by-text"), _fresh("by-json")
    by_text = text_api.post("transactions/", {"text": TEXT})
    by_json = json_api.post("transactions/", JSON_FORM)
    assert by_text.status_code == by_json.status_code == 201
    assert _without_ids(by_text.json()) == _without_ids(by_json.json())
    receipt = by_text.json()
    assert receipt["version"] == 1
    assert len(receipt["results"]) == 2
    assert set(receipt) >= {"released_tokens", "pending_release", "pressure"}
    assert receipt["ref"].startswith("@e")
    stored = {f.context.slug: f.body for f in Frame.objects.filter(frame_id="test-result")}
    assert stored["by-text"] == stored["by-json"]
    assert list(stored["by-text"]) == ["tests", "suite"]


def test_thread_and_evaluation_are_recorded(api: Api) -> None:
    api.observe("x")
    evaluation = api.post("evaluations/", {}).json()
    api.post(
        "transactions/",
        {"text": "(context-tx (derive a (x y)))", "thread": "w-2", "evaluation": evaluation["id"]},
    )
    record = TransactionRecord.objects.get(context__slug="alpha")
    assert record.thread == "w-2"
    assert record.evaluation_id == evaluation["id"]
    token = ApiToken.objects.get(context__slug="alpha", name="agent-a")
    assert record.author == f"agent-a (token {token.key_prefix})"
    assert record.author_kind == "agent"


def test_parse_error_is_400_with_line_and_column(api: Api) -> None:
    response = api.post("transactions/", {"text": "(context-tx\n  (derive a (x y)\n"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "parse_error"
    assert {"line", "column"} <= set(error["details"][0])
    assert error["details"][0]["line"] >= 2


def test_rule_violation_is_422_with_the_failing_operation_index(api: Api) -> None:
    api.commit("(context-tx (derive release (goal ship)))")
    response = api.post(
        "transactions/",
        {"text": "(context-tx (derive fine (a b)) (derive release (goal other)))"},
    )
    assert response.status_code == 422
    error = error_of(response)
    assert error["code"] == "frame_exists"
    assert [d["index"] for d in error["details"]] == [1]
    assert not Frame.objects.filter(frame_id="fine").exists()


def test_unknown_ref_is_422(api: Api) -> None:
    response = api.post("transactions/", {"text": "(context-tx (derive a (from @e77) (x y)))"})
    assert response.status_code == 422
    assert error_of(response)["code"] == "unknown_ref"


def test_conflict_is_409_naming_the_changed_frame(api: Api) -> None:
    api.commit("(context-tx (derive release (goal ship)))")
    api.commit("(context-tx (base-version 1) (revise release (goal ship-v2)))")
    response = api.post(
        "transactions/", {"text": "(context-tx (base-version 1) (revise release (goal v3)))"}
    )
    assert response.status_code == 409
    error = error_of(response)
    assert error["code"] == "conflict"
    assert error["details"][0]["ref"] == "release"
    assert error["details"][0]["revision"] == 2


def test_a_person_with_a_session_commits_as_themselves(api: Api, staff) -> None:
    from rest_framework.test import APIClient

    client = APIClient(enforce_csrf_checks=True)
    client.force_login(staff)
    # Without the CSRF token a session write is refused.
    refused = Api("alpha", client=client).post("transactions/", {"text": "(context-tx (derive a))"})
    assert refused.status_code == 403
    assert error_of(refused)["code"] == "permission_denied"
    from django.utils.crypto import get_random_string

    secret = get_random_string(32)  # what the CSRF cookie of a signed-in page holds
    client.cookies["csrftoken"] = secret
    response = Api("alpha", client=client).post(
        "transactions/",
        {"text": "(context-tx (derive a (x y)))"},
        HTTP_X_CSRFTOKEN=secret,
    )
    assert response.status_code == 201, response.json()
    record = TransactionRecord.objects.get(context__slug="alpha", status="committed")
    assert (record.author, record.author_kind) == ("person:ada", "person")


def test_malformed_submissions_are_400(api: Api) -> None:
    for body in (
        {},
        {"text": "(context-tx (derive a))", "ops": []},
        {"text": 5},
        {"ops": "derive"},
        {"ops": [{"op": "explode"}]},
        {"ops": [{"op": "derive", "id": "Bad Id", "body": {}}]},
        {"base_version": -1, "ops": [{"op": "restore", "ids": ["a"]}]},
        {"base_version": 2**64, "ops": [{"op": "restore", "ids": ["a"]}]},
        {"text": "(context-tx (derive a))", "evaluation": "x"},
        {"text": "(context-tx (derive a))", "mood": "good"},
        {"text": "(context-tx (base-version 99) (derive a))"},
        {"text": "(context-tx (derive a))", "evaluation": 999999},
    ):
        response = api.post("transactions/", body)
        assert response.status_code == 400, (body, response.json())
        assert error_of(response)["code"] in {
            "invalid_request",
            "parse_error",
            "invalid_base_version",
            "unknown_evaluation",
        }
    assert not Frame.objects.exists()


def test_rejections_are_stored_too(api: Api) -> None:
    api.post("transactions/", {"text": "(context-tx (retire @e5))"})
    record = TransactionRecord.objects.get(context__slug="alpha")
    assert record.status == "rejected"
    assert record.errors is not None
    assert record.errors["code"] == "unknown_ref"
