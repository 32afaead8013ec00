"""Bad input gets the error it deserves, never a 500, and
nothing is half-written (duplicate JSON keys, unknown or foreign evaluation ids, cursors,
content over the limit)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.limits import MAX_CONTENT_CHARS
from memory.models import Event, TransactionRecord
from tests.api.conftest import Api, error_of

# -- item 7: duplicate keys ------------------------------------------------------------------

DUPLICATED_BODIES = [
    ("events/", '{"kind": "tool_result", "content": "a", "content": "b"}', "content"),
    (
        "transactions/",
        '{"ops": [{"op": "derive", "id": "x", "body": {"role": "admin", "role": "viewer"}}]}',
        "role",
    ),
    ("evaluations/", '{"thread": "a", "thread": "b"}', "thread"),
    ("recall/", '{"frame_id": "x", "depth": 1, "depth": 2}', "depth"),
    ("actions/", '{"name": "deploy", "arguments": {"env": "a", "env": "b"}}', "env"),
]


@pytest.mark.parametrize(("path", "raw", "key"), DUPLICATED_BODIES)
def test_a_duplicate_json_key_is_400_naming_the_key(
    api: Api, path: str, raw: str, key: str
) -> None:
    response = api.post(path, raw=raw)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert repr(key) in error["message"]
    # its place in the body (test_duplicate_key_names_its_place.py): the key, or ends in it
    assert error["details"][0]["field"].split(".")[-1] == key
    assert not Event.objects.filter(context__slug="alpha").exists()
    assert not TransactionRecord.objects.filter(context__slug="alpha").exists()


def test_the_role_example_stores_nothing(api: Api) -> None:
    raw = '{"ops": [{"op": "derive", "id": "user", "body": {"role": "admin", "role": "viewer"}}]}'
    assert api.post("transactions/", raw=raw).status_code == 400
    assert api.get("frames/user/").status_code == 404


# -- item 3: unknown or foreign evaluation ids -----------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        {"text": "(context-tx (derive", "evaluation": 424242},
        {"text": "(context-tx (retire no-such-frame))", "evaluation": 424242},
        {"ops": [{"op": "revise", "id": "ghost", "body": {"a": 1}}], "evaluation": 424242},
    ],
)
def test_an_unknown_evaluation_never_makes_a_500_and_the_rejection_is_kept(
    api: Api, body: dict[str, Any]
) -> None:
    response = api.post("transactions/", body)
    assert response.status_code in (400, 422), response.content
    error_of(response)
    record = TransactionRecord.objects.get(context__slug="alpha")
    assert record.status == "rejected"
    assert record.evaluation_id is None


def test_another_contexts_evaluation_is_not_stored_on_a_rejection(
    api: Api, beta_token: str
) -> None:
    other = Api("beta", beta_token)
    foreign = other.post("evaluations/", {}).json()["id"]
    response = api.post("transactions/", {"text": "(context-tx (derive", "evaluation": foreign})
    assert response.status_code == 400
    assert error_of(response)["code"] == "parse_error"
    record = TransactionRecord.objects.get(context__slug="alpha")
    assert record.evaluation_id is None
    good = api.post(
        "transactions/", {"text": "(context-tx (derive a (x 1)))", "evaluation": foreign}
    )
    assert error_of(good)["code"] == "unknown_evaluation"
    assert not TransactionRecord.objects.filter(evaluation_id=foreign).exists()


# -- item 8: cursors -------------------------------------------------------------------------


def _two_pages(api: Api, path: str, key: str) -> str:
    response = api.get(path, {"limit": 1})
    assert response.status_code == 200, response.content
    cursor = response.json()["next_cursor"]
    assert cursor, response.json()
    return str(cursor)


@pytest.fixture
def both_filled(api: Api, beta_token: str) -> Api:
    other = Api("beta", beta_token)
    for who in (api, other):
        who.observe("one")
        who.observe("two")
        who.commit("(context-tx (derive a (n 1)) (derive b (n 2)) (relate a supports b))")
        who.commit("(context-tx (derive c (n 3)) (relate c supports b))")
    return other


@pytest.mark.parametrize(
    ("path", "key"),
    [
        ("events/", "events"),
        ("transactions/", "transactions"),
        ("frames/", "frames"),
        ("relations/", "relations"),
    ],
)
def test_a_cursor_minted_on_another_context_is_400_invalid_cursor(
    api: Api, both_filled: Api, path: str, key: str
) -> None:
    cursor = _two_pages(api, path, key)
    response = both_filled.get(path, {"limit": 1, "cursor": cursor})
    assert response.status_code == 400, response.content
    assert error_of(response)["code"] == "invalid_cursor"
    assert api.get(path, {"limit": 1, "cursor": cursor}).status_code == 200


def test_recall_cursor_rules_match_the_lists(api: Api, both_filled: Api) -> None:
    query = {"frame_id": "b", "direction": "both", "max_nodes": 1}
    for cursor in ("garbage", "x" * 100, "a:b:c"):
        response = api.post("recall/", {**query, "cursor": cursor})
        assert response.status_code == 400, response.content
        assert error_of(response)["code"] == "invalid_cursor"
    cursor = api.post("recall/", query).json()["next_cursor"]
    foreign = both_filled.post("recall/", {**query, "cursor": cursor})
    assert foreign.status_code == 400
    assert error_of(foreign)["code"] == "invalid_cursor"
    other_query = api.post("recall/", {**query, "depth": 2, "cursor": cursor})
    assert error_of(other_query)["code"] == "invalid_cursor"
    api.commit("(context-tx (revise a (n 10)))")
    outdated = api.post("recall/", {**query, "cursor": cursor})
    assert outdated.status_code == 409
    assert error_of(outdated)["code"] == "stale_cursor"


# -- item 9: sizes ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("events/", {"kind": "tool_result", "content": "x" * (MAX_CONTENT_CHARS + 1)}),
        ("transactions/", {"text": "x" * (MAX_CONTENT_CHARS + 1)}),
    ],
)
def test_content_over_the_limit_is_413_too_large(api: Api, path: str, body: Any) -> None:
    response = api.post(path, body)
    assert response.status_code == 413, response.content
    error = error_of(response)
    assert error["code"] == "too_large"
    assert error["details"][0]["limit_chars"] == MAX_CONTENT_CHARS
    assert not Event.objects.filter(context__slug="alpha").exists()
    assert not TransactionRecord.objects.filter(context__slug="alpha").exists()


def test_content_at_the_limit_is_accepted(api: Api) -> None:
    response = api.post("events/", {"kind": "tool_result", "content": "y" * MAX_CONTENT_CHARS})
    assert response.status_code == 201
