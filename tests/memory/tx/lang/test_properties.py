"""Properties of the transaction language, checked on generated transactions and hostile text.

- ``parse_text(to_text(tx)) == tx`` for every valid JSON-form transaction, body order included;
- ``to_text(parse_text(t)) == t`` for every canonical text;
- whatever parses is a valid JSON form;
- any text at all fails only with `TxParseError`, any data only with `TxValidationError`.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from memory.tx.lang import (
    MAX_BASE_VERSION,
    MAX_BODY_DEPTH,
    OPERATIONS,
    TxParseError,
    TxValidationError,
    parse_text,
    to_text,
    validate_json,
)
from memory.vocabulary import event_ref

from .test_parse import PROCEDURE_EXAMPLE, RELEASE_EXAMPLE

# No example database: these tests should leave no files behind in the repository.
PROPERTY = settings(
    max_examples=300,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow],
)

# ------------------------------------------------------------------- strategies

# Short ids collide often, which exercises duplicate keys and repeated refs.
frame_ids = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True)
relation_names = st.from_regex(r"[a-z0-9][a-z0-9._-]{0,8}", fullmatch=True)
event_refs = st.integers(1, 10**18 - 1).map(event_ref)
refs = st.one_of(event_refs, frame_ids)
thread_names = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,8}", fullmatch=True)

# Storable text: anything but NUL and lone surrogates.
storable_chars = st.characters(codec="utf-8", exclude_characters="\x00")
tricky_strings = st.sampled_from(
    ["", " ", "from", "a b", '"', "\\", "\\n", "\n", "\r\n", "\t", "@e42", "42", "true", ";x",
     "(x)", "[", "]", "{}", "测试，结果", "\u2028", "\x7f", "\x85", "dist/", "\ufeff", "é"]
)  # fmt: skip
strings = st.one_of(st.text(storable_chars, max_size=10), tricky_strings, frame_ids)
keys = strings.filter(bool)


def height(value: Any) -> int:
    if isinstance(value, str):
        return 0
    children = value.values() if isinstance(value, dict) else value
    return 1 + max((height(child) for child in children), default=0)


body_values = st.recursive(
    strings,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(keys, children, max_size=3),
    max_leaves=12,
)
bodies = st.dictionaries(keys.filter(lambda k: k != "from"), body_values, max_size=4).filter(
    lambda body: height(body) <= MAX_BODY_DEPTH
)

operations = st.one_of(
    st.builds(
        lambda op, frame, sources, body: {"op": op, "id": frame, "from": sources, "body": body},
        st.sampled_from(["derive", "revise"]),
        frame_ids,
        st.lists(refs, max_size=3),
        bodies,
    ),
    st.builds(
        lambda op, subject, name, target: {
            "op": op,
            "subject": subject,
            "name": name,
            "object": target,
        },
        st.sampled_from(["relate", "unrelate"]),
        frame_ids,
        relation_names,
        frame_ids,
    ),
    st.builds(
        lambda found: {"op": "retire", "refs": found}, st.lists(refs, min_size=1, max_size=3)
    ),
    st.builds(
        lambda found: {"op": "restore", "ids": found}, st.lists(refs, min_size=1, max_size=3)
    ),
    st.builds(
        lambda op, found: {"op": op, "ids": found},
        st.sampled_from(["protect", "unprotect"]),
        st.lists(frame_ids, min_size=1, max_size=3),
    ),
)

transactions = st.fixed_dictionaries(
    {
        "base_version": st.none() | st.integers(0, MAX_BASE_VERSION),
        "reason": st.none() | strings,
        "thread": st.none() | thread_names,
        "ops": st.lists(operations, min_size=1, max_size=4),
    }
).map(validate_json)

canonical_texts = transactions.map(to_text)


def same_with_order(left: Any, right: Any) -> bool:
    """Equal, and every map lists its keys in the same order (dict == ignores order)."""
    return left == right and json.dumps(left, ensure_ascii=False) == json.dumps(
        right, ensure_ascii=False
    )


def parses_or_fails_cleanly(text: str) -> dict[str, Any] | None:
    """Parse `text`; a failure must be a TxParseError that points inside the text."""
    try:
        return parse_text(text)
    except TxParseError as error:
        lines = text.split("\n")
        assert 1 <= error.line <= len(lines)
        assert 1 <= error.column <= len(lines[error.line - 1]) + 1
        assert error.message
        return None


# ------------------------------------------------------------------- round trips


@PROPERTY
@given(transactions)
def test_printing_then_parsing_gives_back_the_transaction(tx: dict[str, Any]):
    assert same_with_order(parse_text(to_text(tx)), tx)


@PROPERTY
@given(canonical_texts)
def test_canonical_text_prints_back_exactly(text: str):
    assert to_text(parse_text(text)) == text


@PROPERTY
@given(canonical_texts)
def test_parsed_text_is_a_valid_json_form(text: str):
    parsed = parse_text(text)
    assert same_with_order(validate_json(parsed), parsed)


@PROPERTY
@given(transactions)
def test_validation_is_idempotent(tx: dict[str, Any]):
    assert same_with_order(validate_json(tx), tx)


def test_design_examples_round_trip_through_both_forms():
    for text in (RELEASE_EXAMPLE, PROCEDURE_EXAMPLE):
        parsed = parse_text(text)
        canonical = to_text(parsed)
        assert same_with_order(parse_text(canonical), parsed)
        assert to_text(parse_text(canonical)) == canonical
        assert same_with_order(validate_json(parsed), parsed)


def deepest_body(kinds: str) -> dict[str, Any]:
    """A body nested exactly MAX_BODY_DEPTH levels, alternating the container kinds given."""
    value: Any = "leaf"
    for level in range(MAX_BODY_DEPTH - 1):
        kind = kinds[level % len(kinds)]
        value = [value] if kind == "l" else [value, "x"] if kind == "L" else {"k": value}
    return {"k": value}


def test_the_deepest_bodies_round_trip_in_every_layout():
    # Singleton lists and maps in lists cost the most brackets in the canonical text.
    for kinds in ("l", "m", "L", "lm", "Lm", "lmL"):
        tx = validate_json({"ops": [{"op": "derive", "id": "deep", "body": deepest_body(kinds)}]})
        assert same_with_order(parse_text(to_text(tx)), tx)


# ------------------------------------------------------------------- hostile input


@PROPERTY
@given(st.text(st.characters(exclude_categories=())))
def test_any_text_fails_only_with_parse_errors(text: str):
    parsed = parses_or_fails_cleanly(text)
    assert parsed is None or validate_json(parsed) == parsed


# Fragments of the language, so generated text gets past the first token.
SOUP_PIECES = [*'()[]{}"\\;@e0123 \n\tabx-', "context-tx", "derive", "from", "retire", "\\u"]
syntax_soup = st.lists(st.sampled_from([*SOUP_PIECES, "\x00", "\ud800"]), max_size=30).map("".join)


@PROPERTY
@given(syntax_soup.map(lambda soup: "(context-tx (derive a " + soup))
def test_syntax_soup_fails_only_with_parse_errors(text: str):
    parsed = parses_or_fails_cleanly(text)
    assert parsed is None or same_with_order(parse_text(to_text(parsed)), parsed)


@st.composite
def mutated_texts(draw: st.DrawFn) -> str:
    text = draw(canonical_texts)
    for _ in range(draw(st.integers(1, 3))):
        start = draw(st.integers(0, len(text)))
        end = draw(st.integers(start, min(len(text), start + 12)))
        action = draw(st.sampled_from(["delete", "insert", "duplicate", "replace"]))
        if action == "delete":
            text = text[:start] + text[end:]
        elif action == "duplicate":
            text = text[:end] + text[start:end] + text[end:]
        else:
            piece = draw(st.one_of(syntax_soup, st.text(max_size=3)))
            text = text[:start] + piece + (text[end:] if action == "replace" else text[start:])
    return text


@PROPERTY
@given(mutated_texts())
def test_mutated_transactions_fail_only_with_parse_errors(text: str):
    parsed = parses_or_fails_cleanly(text)
    if parsed is not None:
        assert same_with_order(validate_json(parsed), parsed)
        assert same_with_order(parse_text(to_text(parsed)), parsed)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=5) | refs,
    lambda children: (
        st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=5), children, max_size=3)
    ),
    max_leaves=10,
)
op_keys = st.sampled_from(["op", "id", "from", "body", "subject", "name", "object", "refs", "ids"])
almost_operations = st.dictionaries(
    op_keys,
    st.one_of(
        st.sampled_from(list(OPERATIONS)), refs, st.lists(refs, max_size=2), bodies, json_values
    ),
)
almost_transactions = st.one_of(
    json_values,
    st.dictionaries(
        st.sampled_from(["base_version", "reason", "thread", "ops", "extra"]),
        st.one_of(json_values, st.lists(almost_operations, max_size=3)),
    ),
)


@PROPERTY
@given(almost_transactions)
def test_any_data_fails_only_with_validation_errors(data: Any):
    try:
        result = validate_json(data)
    except TxValidationError as error:
        assert error.message
        return
    assert parse_text(to_text(result)) == result
