"""Edges a new user met: a documented field code for a bad field, no silent type coercion,
one thread rule for single and bulk appends, a hint for a missing trailing slash, and an
offset past the end of an event refused rather than answered with nothing."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from memory.errors import InvalidRequest
from memory.models import Event, TransactionRecord
from memory.strictjson import read_json
from tests.api.conftest import Api, error_of


@pytest.mark.parametrize(
    ("path", "params", "code"),
    [
        ("events/", {"limit": "abc"}, "invalid_limit"),
        ("events/", {"limit": 0}, "invalid_limit"),
        ("events/", {"kind": "gossip"}, "invalid_kind"),
        ("events/", {"thread": "bad thread"}, "invalid_thread"),
        ("frames/", {"status": "zzz"}, "invalid_status"),
        ("frames/", {"as_of": -1}, "invalid_version"),
        ("relations/", {"include_removed": "maybe"}, "invalid_flag"),
        ("search/", {"q": "x", "since": "yesterday"}, "invalid_time"),
        ("search/", {"q": "x", "type": "note"}, "invalid_type"),
    ],
)
def test_a_bad_query_field_answers_its_documented_code(
    api: Api, path: str, params: dict[str, Any], code: str
) -> None:
    response = api.get(path, params)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == code
    assert error["details"][0]["field"] in params


def test_a_bad_recall_depth_answers_invalid_depth(api: Api) -> None:
    api.commit("(context-tx (derive plan (goal ship)))")
    response = api.post("recall/", {"frame_id": "plan", "depth": 99})
    assert error_of(response)["code"] == "invalid_depth"


def test_an_unknown_field_stays_invalid_request_whatever_its_name(api: Api) -> None:
    response = api.post("events/", {"kind": "tool_result", "content": "a", "limit": 3})
    assert error_of(response)["code"] == "invalid_request"


def test_two_bad_fields_with_different_codes_answer_invalid_request(api: Api) -> None:
    response = api.get("events/", {"limit": 0, "kind": "gossip"})
    assert error_of(response)["code"] == "invalid_request"
    assert {d["field"] for d in error_of(response)["details"]} == {"limit", "kind"}


@pytest.mark.parametrize(
    "body",
    [
        {"kind": "tool_result", "content": "x", "thread": 123},
        {"kind": "tool_result", "content": "x", "thread": True},
    ],
)
def test_a_thread_must_be_text_not_a_number_turned_into_text(api: Api, body: Any) -> None:
    response = api.post("events/", body)
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_thread"
    assert not Event.objects.filter(context__slug="alpha").exists()


def test_a_transaction_reason_must_be_text(api: Api) -> None:
    body = {"ops": [{"op": "derive", "id": "x", "body": {"a": 1}}], "reason": 42}
    response = api.post("transactions/", body)
    assert response.status_code == 400
    assert error_of(response)["details"][0]["field"] == "reason"


@pytest.mark.parametrize("thread", ["", "two words"])
def test_an_empty_or_bad_thread_is_refused_alike_single_and_bulk(api: Api, thread: str) -> None:
    single = api.post("events/", {"kind": "tool_result", "content": "x", "thread": thread})
    bulk = api.post(
        "events/", {"events": [{"kind": "tool_result", "content": "x", "thread": thread}]}
    )
    assert single.status_code == bulk.status_code == 400
    assert error_of(single)["code"] == error_of(bulk)["code"] == "invalid_thread"
    assert not Event.objects.filter(context__slug="alpha").exists()


def test_a_missing_trailing_slash_names_the_path_that_exists(api: Api) -> None:
    response = api.client.get(api.url("events"))
    assert response.status_code == 404
    message = error_of(response)["message"]
    assert message.endswith(f"{api.url('events/')}")


def test_a_path_that_does_not_exist_even_with_a_slash_gets_no_hint(api: Api) -> None:
    message = error_of(api.client.get(api.url("nothing-here")))["message"]
    assert "slash" not in message


def test_an_offset_past_the_end_of_an_event_is_refused(api: Api) -> None:
    ref = api.observe("twelve chars")["ref"]
    at_end = api.get(f"events/{ref[2:]}/", {"offset": 12})
    assert at_end.status_code == 200
    assert at_end.json()["content"] == ""
    past = api.get(f"events/{ref[2:]}/", {"offset": 13})
    assert past.status_code == 400
    error = error_of(past)
    assert error["code"] == "invalid_offset"
    assert error["details"][0]["total"] == 12


def test_duplicate_keys_in_a_tool_calls_arguments_are_refused(api: Api) -> None:
    """A model's tool call is answered as feedback (the reply itself is fine), and the
    feedback names the duplicated key; nothing is appended with either value."""
    raw = json.dumps(
        {"tool_calls": [{"name": "append", "arguments": '{"content": "a", "content": "b"}'}]}
    )
    response = api.post("replies/", raw=raw)
    assert response.status_code == 200, response.content
    (action,) = response.json()["actions"]
    assert action["error"]["code"] == "invalid_arguments"
    assert "'content'" in action["error"]["message"]
    assert not Event.objects.filter(context__slug="alpha", content__in=["a", "b"]).exists()


@pytest.mark.parametrize("value", ["+3", " 3", "1.0", "３", "٣"])
def test_a_query_integer_is_ascii_digits(api: Api, value: str) -> None:
    response = api.get("events/", {"limit": value})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_limit"


@pytest.mark.parametrize("value", ["2", 2.0, True])
def test_a_body_integer_is_a_json_integer(api: Api, value: Any) -> None:
    api.commit("(context-tx (derive plan (goal ship)))")
    response = api.post("recall/", {"frame_id": "plan", "depth": value})
    assert response.status_code == 400
    assert error_of(response)["code"] == "invalid_depth"


def test_a_query_parameter_given_twice_is_refused(api: Api) -> None:
    response = api.client.get(api.url("search/") + "?q=release&q=web")
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["details"] == [{"field": "q", "reason": "repeated"}]


def test_query_integers_still_read_as_numbers(api: Api) -> None:
    api.observe("one")
    api.observe("two")
    page = api.get("events/", {"limit": "1"}).json()
    assert len(page["events"]) == 1 and page["next_cursor"]


# A JSON key given twice is 400 `invalid_request` whose `details[].field` names the place
# of the key in the body, in the style of every other field error (`payload.a`,
# `events[1].content`, `ops[0].body.role`), not the bare key, which a client cannot find in
# a nested body (`a` in `payload` or elsewhere?).


@pytest.mark.parametrize(
    ("path", "raw", "field"),
    [
        ("events/", '{"kind": "tool_result", "content": "a", "content": "b"}', "content"),
        (
            "events/",
            '{"kind": "tool_result", "content": "a", "payload": {"a": 1, "a": 2}}',
            "payload.a",
        ),
        (
            "events/",
            '{"events": [{"kind": "tool_result", "content": "a"},'
            ' {"kind": "tool_result", "content": "a", "content": "b"}]}',
            "events[1].content",
        ),
        (
            "transactions/",
            '{"ops": [{"op": "derive", "id": "x", "body": {"role": "admin", "role": "viewer"}}]}',
            "ops[0].body.role",
        ),
        ("actions/", '{"name": "deploy", "arguments": {"env": "a", "env": "b"}}', "arguments.env"),
    ],
)
def test_a_duplicate_key_names_its_place(api: Api, path: str, raw: str, field: str) -> None:
    response = api.post(path, raw=raw)
    assert response.status_code == 400, response.content
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["details"] == [{"field": field, "reason": "duplicate_key"}]
    assert not Event.objects.filter(context__slug="alpha").exists()
    assert not TransactionRecord.objects.filter(context__slug="alpha").exists()


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"a": {"b": [1, {"c": 1, "c": 2}]}}', "a.b[1].c"),
        # the first object to close with a duplicate is the one named
        ('{"x": 1, "y": {"z": 1, "z": 2}, "x": 2}', "y.z"),
        ('{"x": 1, "x": 2, "y": {"z": 1}}', "x"),
        ('[{"k": 1}, {"k": 1, "k": 2}]', "[1].k"),
    ],
)
def test_read_json_names_the_path(raw: str, field: str) -> None:
    with pytest.raises(InvalidRequest) as raised:
        read_json(raw)
    assert raised.value.details == [{"field": field, "reason": "duplicate_key"}]


# A request body nested deeper than 64 levels is one clear 400 `invalid_request` ("JSON
# nests deeper than 64 levels"), however deep: past Python's recursion limit too, never a
# `parse_error` quoting the interpreter. Nothing is written.


def _nested_lists(levels: int) -> str:
    return "[" * levels + "]" * levels


def _nested_objects(levels: int) -> str:
    return '{"a":' * levels + "1" + "}" * levels


@pytest.mark.parametrize("levels", [200, 1000, 100_000])
@pytest.mark.parametrize("nest", [_nested_lists, _nested_objects])
def test_a_body_nested_too_deep_is_a_clear_invalid_request(
    api: Api, levels: int, nest: Callable[[int], str]
) -> None:
    payload = nest(levels)
    raw = '{"kind": "tool_result", "content": "x", "payload": ' + payload + "}"
    response = api.post("events/", raw=raw)
    assert response.status_code == 400
    error = error_of(response)
    assert error["code"] == "invalid_request"
    assert error["message"] == "JSON nests deeper than 64 levels"
    assert error["details"] == [{"max_depth": 64}]
    assert "recursion" not in response.content.decode()
    assert api.get("events/").json()["events"] == []
