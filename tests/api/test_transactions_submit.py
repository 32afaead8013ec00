"""POST /api/v1/contexts/{slug}/transactions/ : text or JSON form, receipts and rejections
(R9-R11, R19, R20)."""

from __future__ import annotations

from typing import Any

import pytest

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


# A malformed JSON-form transaction names the failing place as `details[].field`, as every
# other validation error does (docs/rest.md: `details[].field` always names each field), in
# the same bracket style (`ops[1].body.goal`): a client reading `field` finds it here too.

DERIVE = {"op": "derive", "id": "goal", "body": {"state": "open"}}


@pytest.mark.parametrize(
    ("op", "field"),
    [
        ({"op": "bogus"}, "ops[1].op"),
        ({"op": "derive", "id": "x", "body": {"goal": 1}}, "ops[1].body.goal"),
        ({"op": "derive", "id": "x", "from": "@e1", "body": {}}, "ops[1].from"),
        ({"op": "retire", "refs": []}, "ops[1].refs"),
        ({"op": "derive", "id": "x", "body": {"": "y"}}, 'ops[1].body[""]'),
    ],
)
def test_a_json_form_error_names_its_field(api: Api, op: dict[str, Any], field: str) -> None:
    response = api.post("transactions/", {"reason": "r", "ops": [DERIVE, op]})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert [d["field"] for d in error["details"]] == [field]
    assert error["message"].startswith(f"{field}: ")
    assert not TransactionRecord.objects.filter(status="committed").exists()


def test_no_operation_names_ops(api: Api) -> None:
    response = api.post("transactions/", {"reason": "r", "ops": []})
    assert [d["field"] for d in error_of(response)["details"]] == ["ops"]


# A transaction states its thread in one place, and its JSON form meets the size limit of
# its text form: a `thread` beside a text that declares another is 400 `invalid_thread`, a
# JSON form whose text would pass the limit is 413 `too_large`; nothing is written either way.


def test_a_thread_beside_a_text_declaring_another_is_refused(api: Api) -> None:
    text = "(context-tx (thread t1) (derive h10 (a b)))"
    response = api.post("transactions/", {"text": text, "thread": "t2"})
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_thread"
    assert error["details"] == [{"field": "thread"}]
    assert not Frame.objects.filter(frame_id="h10").exists()


def test_the_same_thread_in_both_places_commits_on_it(api: Api) -> None:
    text = "(context-tx (thread t1) (derive h10 (a b)))"
    response = api.post("transactions/", {"text": text, "thread": "t1"})
    assert response.status_code == 201
    assert TransactionRecord.objects.get(status="committed").thread == "t1"


def test_a_json_form_over_the_text_limit_is_too_large(
    api: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("memory.tx.submission.MAX_CONTENT_CHARS", 1000)
    ops = [{"op": "derive", "id": "big", "body": {"a": "q" * 2000}}]
    response = api.post("transactions/", {"ops": ops})
    assert response.status_code == 413
    assert error_of(response)["code"] == "too_large"
    assert not Frame.objects.filter(frame_id="big").exists()
    small = [{"op": "derive", "id": "small", "body": {"a": "q" * 100}}]
    assert api.post("transactions/", {"ops": small}).status_code == 201
