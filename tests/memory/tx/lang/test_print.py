"""The canonical printer: layout, quoting and the explicit list/map forms (R9 round trip)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.tx.lang import TxValidationError, canonicalize, parse_text, to_text

from .test_parse import PROCEDURE_EXAMPLE, RELEASE_EXAMPLE


def derive(body: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"ops": [{"op": "derive", "id": "f", "body": body, **extra}]}


def printed_body(body: dict[str, Any]) -> str:
    """The derive line of a one-operation transaction, without the layout around it."""
    text = to_text(derive(body))
    prefix, suffix = "(context-tx\n  (derive f", "))"
    assert text.startswith(prefix)
    assert text.endswith(suffix)
    return text[len(prefix) : -len(suffix)].strip()


def test_release_example_is_canonical_text():
    assert to_text(parse_text(RELEASE_EXAMPLE)) == RELEASE_EXAMPLE


def test_procedure_example_prints_each_operation_on_one_line():
    assert canonicalize(PROCEDURE_EXAMPLE) == (
        "(context-tx\n"
        "  (base-version 42)\n"
        '  (reason "将两次发布经验归纳为可复用流程")\n'
        "  (derive release-procedure (from release-case-a release-case-b)"
        ' (steps "测试通过后构建，核验本次产物，再打包。")'
        ' (single-package (test "npm test") (build "npm run build") (artifact "dist/"))'
        ' (workspace (test "pnpm --filter web test") (build "pnpm --filter web build")'
        ' (artifact "apps/web/dist/"))'
        ' (applicability "先核对当前项目布局和脚本，再选择对应分支。"))\n'
        "  (relate release-procedure supersedes release-case-a)\n"
        "  (relate release-procedure supersedes release-case-b)\n"
        "  (retire release-case-a release-case-b))"
    )


def test_every_operation_prints_in_its_canonical_shape():
    tx = {
        "base_version": 0,
        "reason": "r",
        "thread": "worker-1",
        "ops": [
            {"op": "derive", "id": "a", "from": ["@e1", "b"], "body": {"k": "v"}},
            {"op": "revise", "id": "a", "body": {}},
            {"op": "relate", "subject": "a", "name": "supports", "object": "b"},
            {"op": "unrelate", "subject": "a", "name": "supports", "object": "b"},
            {"op": "retire", "refs": ["@e1", "b"]},
            {"op": "restore", "ids": ["b", "@e1"]},
            {"op": "protect", "ids": ["a", "b"]},
            {"op": "unprotect", "ids": ["a"]},
        ],
    }
    assert to_text(tx) == (
        "(context-tx\n"
        "  (base-version 0)\n"
        '  (reason "r")\n'
        "  (thread worker-1)\n"
        "  (derive a (from @e1 b) (k v))\n"
        "  (revise a)\n"
        "  (relate a supports b)\n"
        "  (unrelate a supports b)\n"
        "  (retire @e1 b)\n"
        "  (restore b @e1)\n"
        "  (protect a b)\n"
        "  (unprotect a))"
    )


def test_absent_headers_are_not_printed():
    assert to_text({"ops": [{"op": "retire", "refs": ["@e5"]}]}) == "(context-tx\n  (retire @e5))"


def test_the_reason_is_always_quoted():
    text = to_text({"reason": "cleanup", "ops": [{"op": "retire", "refs": ["@e5"]}]})
    assert '(reason "cleanup")' in text


def test_plain_words_print_bare_and_everything_else_quoted():
    body = {
        "word": "ship-v1",
        "number": "42",
        "ref": "@e42",
        "spaced": "npm test",
        "path": "dist/",
        "chinese": "发布",
        "empty": "",
        "paren": "a(b",
        "semicolon": "a;b",
    }
    assert printed_body(body) == (
        '(word ship-v1) (number 42) (ref @e42) (spaced "npm test") (path "dist/")'
        ' (chinese "发布") (empty "") (paren "a(b") (semicolon "a;b")'
    )


def test_only_quotes_backslashes_and_control_characters_are_escaped():
    body = {"s": 'say "hi" \\ é 😀\n\t\r\x07\u2028'}
    assert printed_body(body) == r'(s "say \"hi\" \\ é 😀\n\t\r\u0007\u2028")'


def test_keys_are_quoted_when_they_are_not_plain_words():
    assert printed_body({"two words": "x", "键": "y", "origin": {"from": "z"}}) == (
        '("two words" x) ("键" y) (origin (from z))'
    )


def test_lists_of_two_or_more_use_the_plain_form():
    assert printed_body({"tags": ["a", "b c"]}) == '(tags a "b c")'


def test_short_and_nested_lists_use_the_explicit_form():
    assert printed_body({"one": ["a"], "none": [], "lists": [["a", "b"], []], "deep": [["x"]]}) == (
        "(one [a]) (none []) (lists [a b] []) (deep [[x]])"
    )


def test_maps_print_as_fields_and_use_braces_where_fields_cannot_go():
    body = {"meta": {}, "nested": {"a": {"b": "c"}}, "steps": [{"run": "test"}, {}]}
    assert printed_body(body) == "(meta {}) (nested (a (b c))) (steps {(run test)} {})"


def test_a_single_map_in_a_list_stays_a_list():
    assert printed_body({"steps": [{"run": "test", "in": ["web"]}]}) == (
        "(steps [{(run test) (in [web])}])"
    )


def test_printing_validates_first():
    with pytest.raises(TxValidationError) as caught:
        to_text({"ops": [{"op": "derive", "id": "Bad", "body": {}}]})
    assert caught.value.path == "ops[0].id"


def test_canonicalize_normalises_layout_comments_and_quoting():
    messy = """
    ; a comment
    (context-tx (reason why)
        (derive   f ("k"   "v") (tags [a b]) (n 007))
        (retire "@e1"))
    """
    assert canonicalize(messy) == (
        '(context-tx\n  (reason "why")\n  (derive f (k v) (tags a b) (n 007))\n  (retire @e1))'
    )


def test_canonical_text_is_a_fixed_point():
    for text in (RELEASE_EXAMPLE, PROCEDURE_EXAMPLE):
        canonical = canonicalize(text)
        assert canonicalize(canonical) == canonical
