"""The JSON form of transactions (docs/transactions.md): validation, normalisation, error paths, helpers."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any

import pytest

from memory.tx.lang import (
    MAX_BASE_VERSION,
    MAX_BODY_DEPTH,
    TxError,
    TxValidationError,
    parse_text,
    validate_json,
)
from memory.vocabulary import (
    EVENT_REF_RE,
    FRAME_ID_RE,
    RELATION_NAME_RE,
    event_ref,
    event_seq,
    is_event_ref,
    is_frame_id,
    is_ref,
    is_relation_name,
)

from .test_parse import PROCEDURE_EXAMPLE, RELEASE_EXAMPLE


def one_op(op: dict[str, Any]) -> dict[str, Any]:
    return {"ops": [op]}


def invalid(data: object, **kwargs: Any) -> TxValidationError:
    with pytest.raises(TxValidationError) as caught:
        validate_json(data, **kwargs)
    return caught.value


# ------------------------------------------------------------------- normalisation


def test_defaults_are_filled_in():
    assert validate_json({"ops": [{"op": "derive", "id": "a", "body": {"k": "v"}}]}) == {
        "base_version": None,
        "reason": None,
        "thread": None,
        "ops": [{"op": "derive", "id": "a", "from": [], "body": {"k": "v"}}],
    }


def test_parsed_design_examples_are_valid_json_forms():
    for text in (RELEASE_EXAMPLE, PROCEDURE_EXAMPLE):
        parsed = parse_text(text)
        assert validate_json(parsed) == parsed


def test_the_result_is_a_copy_with_plain_containers():
    body: OrderedDict[str, Any] = OrderedDict([("b", ("x", "y")), ("a", {"n": []})])
    data = {"ops": [{"op": "derive", "id": "a", "from": ("@e1",), "body": body}]}
    result = validate_json(data)
    op = result["ops"][0]
    assert op["from"] == ["@e1"]
    assert type(op["body"]) is dict
    assert list(op["body"]) == ["b", "a"]
    assert op["body"]["b"] == ["x", "y"]
    op["body"]["a"]["n"].append("changed")
    assert body["a"]["n"] == []


def test_explicit_nulls_are_accepted_for_headers():
    data = {
        "base_version": None,
        "reason": None,
        "thread": None,
        "ops": [{"op": "retire", "refs": ["@e1"]}],
    }
    assert validate_json(data) == data


def test_request_keys_can_be_ignored_explicitly():
    data = {"evaluation": 7, "ops": [{"op": "protect", "ids": ["a"]}]}
    assert "evaluation" not in validate_json(data, ignore_keys={"evaluation"})
    assert invalid(data).path == "evaluation"


def test_every_operation_validates():
    ops = [
        {"op": "derive", "id": "a", "from": ["@e1", "b"], "body": {}},
        {"op": "revise", "id": "a", "body": {"k": ["x", {"y": "z"}]}},
        {"op": "relate", "subject": "a", "name": "supports", "object": "b"},
        {"op": "unrelate", "subject": "a", "name": "supports", "object": "b"},
        {"op": "retire", "refs": ["@e1", "b"]},
        {"op": "restore", "ids": ["b", "@e1"]},
        {"op": "protect", "ids": ["a"]},
        {"op": "unprotect", "ids": ["a"]},
    ]
    assert [op["op"] for op in validate_json({"base_version": 3, "ops": ops})["ops"]] == [
        "derive",
        "revise",
        "relate",
        "unrelate",
        "retire",
        "restore",
        "protect",
        "unprotect",
    ]


def test_from_is_an_ordinary_key_inside_nested_maps():
    data = one_op({"op": "derive", "id": "a", "body": {"origin": {"from": "x"}}})
    assert validate_json(data)["ops"][0]["body"] == {"origin": {"from": "x"}}


# ------------------------------------------------------------------- errors with paths


@pytest.mark.parametrize(
    ("data", "path", "fragment"),
    [
        ([], "", "must be an object"),
        ({}, "ops", "missing"),
        ({"ops": []}, "ops", "at least one operation"),
        ({"ops": "retire"}, "ops", "must be a list"),
        ({"opz": [], "ops": []}, "opz", 'unknown key "opz"'),
        ({"base_version": True, "ops": []}, "base_version", "not a boolean"),
        ({"base_version": -1, "ops": []}, "base_version", "non-negative integer"),
        ({"base_version": 1.0, "ops": []}, "base_version", "non-negative integer"),
        ({"base_version": "3", "ops": []}, "base_version", "non-negative integer"),
        ({"base_version": MAX_BASE_VERSION + 1, "ops": []}, "base_version", "non-negative"),
        ({"reason": 5, "ops": []}, "reason", "must be a string or null"),
        ({"reason": "a\x00b", "ops": []}, "reason", "NUL"),
        ({"thread": "", "ops": []}, "thread", "cannot be empty"),
        ({"thread": "t" * 101, "ops": []}, "thread", "at most 100"),
        ({"thread": "main thread", "ops": []}, "thread", "letters, digits"),
        ({"thread": "w1\n", "ops": []}, "thread", "letters, digits"),
        ({"ops": [7]}, "ops[0]", "must be an object"),
        ({"ops": [{}]}, "ops[0].op", "found nothing"),
        ({"ops": [{"op": "delete"}]}, "ops[0].op", 'found "delete"'),
        ({"ops": [{"op": ["retire"]}]}, "ops[0].op", "found a list"),
        ({"ops": [{"op": "retire"}]}, "ops[0].refs", "missing"),
        ({"ops": [{"op": "retire", "refs": []}]}, "ops[0].refs", "at least one ref"),
        ({"ops": [{"op": "retire", "refs": "@e1"}]}, "ops[0].refs", "must be a list of refs"),
        ({"ops": [{"op": "retire", "refs": ["@e1", "@e01"]}]}, "ops[0].refs[1]", "leading zeros"),
        ({"ops": [{"op": "retire", "ids": ["a"]}]}, "ops[0].ids", 'unknown key "ids"'),
        ({"ops": [{"op": "protect", "ids": ["@e1"]}]}, "ops[0].ids[0]", "not a frame id"),
        ({"ops": [{"op": "restore", "ids": [3]}]}, "ops[0].ids[0]", "not the number 3"),
        ({"ops": [{"op": "derive", "id": "a"}]}, "ops[0].body", "missing"),
        ({"ops": [{"op": "derive", "body": {}}]}, "ops[0].id", "missing"),
        ({"ops": [{"op": "derive", "id": "A", "body": {}}]}, "ops[0].id", 'write "a"'),
        ({"ops": [{"op": "derive", "id": "a", "body": []}]}, "ops[0].body", "must be an object"),
        ({"ops": [{"op": "derive", "id": "a", "from": "b", "body": {}}]}, "ops[0].from", "list"),
        (
            {"ops": [{"op": "derive", "id": "a", "body": {}, "sources": []}]},
            "ops[0].sources",
            'unknown key "sources"',
        ),
        (
            {"ops": [{"op": "relate", "subject": "a", "name": "x y", "object": "b"}]},
            "ops[0].name",
            "not a relation name",
        ),
        (
            {"ops": [{"op": "relate", "subject": "a", "name": "r", "object": "@e2"}]},
            "ops[0].object",
            "not a frame id",
        ),
        ({"ops": [{"op": "unrelate", "subject": "a", "name": "r"}]}, "ops[0].object", "missing"),
    ],
)
def test_validation_errors_name_their_path(data: object, path: str, fragment: str):
    error = invalid(data)
    assert error.path == path, str(error)
    assert fragment in error.message, str(error)
    assert str(error) == (f"{path}: {error.message}" if path else error.message)


def body_error(body: object) -> TxValidationError:
    return invalid(
        {"ops": [{"op": "retire", "refs": ["@e1"]}, {"op": "revise", "id": "a", "body": body}]}
    )


@pytest.mark.parametrize(
    ("body", "path", "fragment"),
    [
        ({"goal": 42}, "ops[1].body.goal", 'write it as the string "42"'),
        ({"goal": True}, "ops[1].body.goal", 'write it as the string "true"'),
        ({"goal": None}, "ops[1].body.goal", 'write it as the string "null"'),
        ({"goal": 1.5}, "ops[1].body.goal", "not the number 1.5"),
        ({"goal": {"steps": ["a", 2]}}, "ops[1].body.goal.steps[1]", "not the number 2"),
        ({"two words": {"x": False}}, 'ops[1].body["two words"].x', "not a boolean"),
        ({"": "v"}, 'ops[1].body[""]', "cannot be empty"),
        ({1: "v"}, "ops[1].body", "field names are strings"),
        ({"from": ["@e1"]}, "ops[1].body.from", '"from" is reserved'),
        ({"k": "bad\ud800"}, "ops[1].body.k", "lone surrogate"),
        ({"k\x00": "v"}, 'ops[1].body["k\\u0000"]', "NUL"),
        ({"k": {1, 2}}, "ops[1].body.k", "not a set"),
    ],
)
def test_body_errors_name_the_field(body: object, path: str, fragment: str):
    error = body_error(body)
    assert error.path == path, str(error)
    assert fragment in error.message, str(error)


def test_body_nesting_is_limited_without_recursion_errors():
    ok: Any = "leaf"
    for _ in range(MAX_BODY_DEPTH - 1):
        ok = [ok]
    assert validate_json(one_op({"op": "derive", "id": "a", "body": {"k": ok}}))
    error = body_error({"k": [ok]})
    assert "nests too deeply" in error.message
    assert error.path == "ops[1].body.k" + "[0]" * (MAX_BODY_DEPTH - 1)


def test_self_referencing_structures_are_refused_cleanly():
    loop: list[Any] = []
    loop.append(loop)
    assert "nests too deeply" in body_error({"k": loop}).message


def test_validation_error_is_a_tx_error_with_a_serialisable_summary():
    error = invalid({"ops": [{"op": "protect", "ids": []}]})
    assert isinstance(error, TxError)
    assert error.as_dict() == {"message": str(error), "path": "ops[0].ids"}


# ------------------------------------------------------------------- ids and refs


@pytest.mark.parametrize("good", ["a", "0", "release-procedure", "v1.2_x", "a" * 128])
def test_frame_ids(good: str):
    assert is_frame_id(good)
    assert FRAME_ID_RE.fullmatch(good)
    assert is_ref(good)


@pytest.mark.parametrize("bad", ["", "A", "-a", ".a", "a b", "a/b", "a\n", "é", "a" * 129, 3])
def test_not_frame_ids(bad: object):
    assert not is_frame_id(bad)


def test_relation_names_are_at_most_64_characters():
    assert is_relation_name("s" * 64)
    assert RELATION_NAME_RE.fullmatch("depends-on")
    assert not is_relation_name("s" * 65)
    assert not is_relation_name("Supports")


@pytest.mark.parametrize("good", ["@e1", "@e42", "@e" + "9" * 18])
def test_event_refs(good: str):
    assert is_event_ref(good)
    assert EVENT_REF_RE.fullmatch(good)
    assert is_ref(good)
    assert event_ref(event_seq(good)) == good


@pytest.mark.parametrize(
    "bad", ["@e0", "@e01", "@E1", "e1", "@e", "@e1\n", "@e-1", "@e" + "9" * 19]
)
def test_not_event_refs(bad: str):
    assert not is_event_ref(bad)
    with pytest.raises(ValueError):
        event_seq(bad)


def test_event_seq_reads_the_number():
    assert event_seq("@e42") == 42
    assert event_ref(42) == "@e42"
