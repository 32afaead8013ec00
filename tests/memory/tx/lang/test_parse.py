"""The text form of context transactions (R9, R10): what parses to what, and how errors read."""

from __future__ import annotations

from typing import Any

import pytest

from memory.tx.lang import MAX_BODY_DEPTH, TxError, TxParseError, parse_text

RELEASE_EXAMPLE = """(context-tx
  (base-version 12)
  (reason "测试结果已吸收，继续准备发布")
  (derive test-result (from @e42) (tests passed))
  (revise release (goal ship-v1) (stage packaging))
  (relate test-result supports release)
  (retire @e42))"""

PROCEDURE_EXAMPLE = """(context-tx
  (base-version 42)
  (reason "将两次发布经验归纳为可复用流程")
  (derive release-procedure
    (from release-case-a release-case-b)
    (steps "测试通过后构建，核验本次产物，再打包。")
    (single-package (test "npm test") (build "npm run build") (artifact "dist/"))
    (workspace (test "pnpm --filter web test") (build "pnpm --filter web build") (artifact "apps/web/dist/"))
    (applicability "先核对当前项目布局和脚本，再选择对应分支。"))
  (relate release-procedure supersedes release-case-a)
  (relate release-procedure supersedes release-case-b)
  (retire release-case-a release-case-b))"""


def tx(*ops: str) -> str:
    return "(context-tx " + " ".join(ops) + ")"


def only_op(*ops: str) -> dict[str, Any]:
    (op,) = parse_text(tx(*ops))["ops"]
    return op


def body_of(*fields: str) -> Any:
    return only_op("(derive f " + " ".join(fields) + ")")["body"]


def parse_error(text: str) -> TxParseError:
    with pytest.raises(TxParseError) as caught:
        parse_text(text)
    return caught.value


# ------------------------------------------------------------------- design examples


def test_release_example_parses_to_the_json_form():
    assert parse_text(RELEASE_EXAMPLE) == {
        "base_version": 12,
        "reason": "测试结果已吸收，继续准备发布",
        "thread": None,
        "ops": [
            {"op": "derive", "id": "test-result", "from": ["@e42"], "body": {"tests": "passed"}},
            {
                "op": "revise",
                "id": "release",
                "from": [],
                "body": {"goal": "ship-v1", "stage": "packaging"},
            },
            {"op": "relate", "subject": "test-result", "name": "supports", "object": "release"},
            {"op": "retire", "refs": ["@e42"]},
        ],
    }


def test_procedure_example_parses_nested_maps_in_written_order():
    parsed = parse_text(PROCEDURE_EXAMPLE)
    assert parsed == {
        "base_version": 42,
        "reason": "将两次发布经验归纳为可复用流程",
        "thread": None,
        "ops": [
            {
                "op": "derive",
                "id": "release-procedure",
                "from": ["release-case-a", "release-case-b"],
                "body": {
                    "steps": "测试通过后构建，核验本次产物，再打包。",
                    "single-package": {
                        "test": "npm test",
                        "build": "npm run build",
                        "artifact": "dist/",
                    },
                    "workspace": {
                        "test": "pnpm --filter web test",
                        "build": "pnpm --filter web build",
                        "artifact": "apps/web/dist/",
                    },
                    "applicability": "先核对当前项目布局和脚本，再选择对应分支。",
                },
            },
            {
                "op": "relate",
                "subject": "release-procedure",
                "name": "supersedes",
                "object": "release-case-a",
            },
            {
                "op": "relate",
                "subject": "release-procedure",
                "name": "supersedes",
                "object": "release-case-b",
            },
            {"op": "retire", "refs": ["release-case-a", "release-case-b"]},
        ],
    }
    body = parsed["ops"][0]["body"]
    assert list(body) == ["steps", "single-package", "workspace", "applicability"]
    assert list(body["workspace"]) == ["test", "build", "artifact"]


# ------------------------------------------------------------------- headers


def test_headers_are_optional_and_default_to_none():
    assert parse_text(tx("(protect a)")) == {
        "base_version": None,
        "reason": None,
        "thread": None,
        "ops": [{"op": "protect", "ids": ["a"]}],
    }


def test_headers_may_come_in_any_order_before_operations():
    parsed = parse_text(tx('(thread worker-2) (reason "why") (base-version 0)', "(retire @e1)"))
    assert (parsed["base_version"], parsed["reason"], parsed["thread"]) == (0, "why", "worker-2")


def test_reason_may_be_a_bare_word_or_an_empty_string():
    assert parse_text(tx("(reason cleanup)", "(retire @e1)"))["reason"] == "cleanup"
    assert parse_text(tx('(reason "")', "(retire @e1)"))["reason"] == ""


def test_thread_may_be_quoted():
    assert parse_text(tx('(thread "worker:2")', "(retire @e1)"))["thread"] == "worker:2"


def test_thread_follows_the_one_thread_rule():
    with pytest.raises(TxParseError, match="letters, digits"):
        parse_text(tx('(thread "main thread")', "(retire @e1)"))


# ------------------------------------------------------------------- operations


def test_derive_without_sources_has_an_empty_from_list():
    assert only_op("(derive plan (goal ship))") == {
        "op": "derive",
        "id": "plan",
        "from": [],
        "body": {"goal": "ship"},
    }


def test_derive_and_revise_may_have_an_empty_body():
    assert only_op("(derive placeholder)")["body"] == {}
    assert only_op("(revise plan (from @e3))") == {
        "op": "revise",
        "id": "plan",
        "from": ["@e3"],
        "body": {},
    }


def test_sources_mix_event_refs_and_frame_ids_in_order():
    assert only_op("(derive f (from @e7 case-a @e1) (k v))")["from"] == ["@e7", "case-a", "@e1"]


def test_unrelate_takes_subject_name_object():
    assert only_op("(unrelate a depends-on b)") == {
        "op": "unrelate",
        "subject": "a",
        "name": "depends-on",
        "object": "b",
    }


def test_retire_takes_event_refs_and_frame_ids():
    assert only_op("(retire @e42 release-case-a @e7)") == {
        "op": "retire",
        "refs": ["@e42", "release-case-a", "@e7"],
    }


def test_restore_takes_frame_ids_and_event_refs():
    assert only_op("(restore release @e9)") == {"op": "restore", "ids": ["release", "@e9"]}


@pytest.mark.parametrize("name", ["protect", "unprotect"])
def test_protect_and_unprotect_take_frame_ids(name: str):
    assert only_op(f"({name} a b.c d_e)") == {"op": name, "ids": ["a", "b.c", "d_e"]}


def test_operations_keep_their_order():
    parsed = parse_text(tx("(restore a)", "(revise a (k v))", "(protect a)", "(unprotect a)"))
    assert [op["op"] for op in parsed["ops"]] == ["restore", "revise", "protect", "unprotect"]


def test_ids_may_be_quoted():
    assert only_op('(relate "a" supports "b")') == {
        "op": "relate",
        "subject": "a",
        "name": "supports",
        "object": "b",
    }


# ------------------------------------------------------------------- bodies


def test_one_value_is_a_string_and_several_are_a_list():
    assert body_of("(stage packaging)", "(tags a b c)") == {
        "stage": "packaging",
        "tags": ["a", "b", "c"],
    }


def test_bare_numbers_and_booleans_are_strings():
    assert body_of("(count 42)", "(done true)", "(none null)") == {
        "count": "42",
        "done": "true",
        "none": "null",
    }


def test_fields_of_fields_make_nested_maps():
    assert body_of("(a (b (c deep)) (d x y))") == {"a": {"b": {"c": "deep"}, "d": ["x", "y"]}}


def test_explicit_list_form_writes_short_and_nested_lists():
    assert body_of("(one [a])", "(none [])", "(nested [[a b] [] c])") == {
        "one": ["a"],
        "none": [],
        "nested": [["a", "b"], [], "c"],
    }


def test_explicit_map_form_writes_empty_maps_and_maps_in_lists():
    assert body_of("(meta {})", "(steps {(run test)} {(run build) (dir web)})") == {
        "meta": {},
        "steps": [{"run": "test"}, {"run": "build", "dir": "web"}],
    }


def test_a_single_explicit_map_is_the_value_itself():
    assert body_of("(meta {(a b)})") == {"meta": {"a": "b"}}


def test_quoted_keys_may_hold_any_text():
    assert body_of('("two words" x)', '("键" 值)') == {"two words": "x", "键": "值"}


def test_string_escapes_decode():
    assert body_of(r'(s "q\" b\\ n\n t\t r\r u\u00e9 pair\ud83d\ude00")') == {
        "s": 'q" b\\ n\n t\t r\r u\u00e9 pair\U0001f600'
    }


def test_strings_keep_unicode_and_raw_newlines():
    assert body_of('(note "第一行\n第二行 😀")') == {"note": "第一行\n第二行 😀"}


def test_from_inside_a_nested_map_is_an_ordinary_key():
    assert only_op("(derive f (origin (from upstream)))") == {
        "op": "derive",
        "id": "f",
        "from": [],
        "body": {"origin": {"from": "upstream"}},
    }


def test_atoms_may_hold_punctuation_and_unicode():
    assert body_of(r"(path C:\tmp\x.log)", "(who 张三)", "(ref @e42)") == {
        "path": "C:\\tmp\\x.log",
        "who": "张三",
        "ref": "@e42",
    }


def test_comments_and_whitespace_are_ignored():
    text = "; leading comment\n(context-tx ; header next\n\t(retire @e1) ; done\n)\n; trailing\n"
    assert parse_text(text)["ops"] == [{"op": "retire", "refs": ["@e1"]}]


def test_a_semicolon_inside_a_string_is_not_a_comment():
    assert body_of('(k "a;b")') == {"k": "a;b"}


def test_body_nesting_up_to_the_limit_is_accepted():
    # The body is level 1, so MAX_BODY_DEPTH - 1 explicit lists fit below it.
    depth = MAX_BODY_DEPTH - 1
    value = body_of("(k " + "[" * depth + "x" + "]" * depth + ")")["k"]
    for _ in range(depth):
        assert isinstance(value, list)
        (value,) = value
    assert value == "x"


# ------------------------------------------------------------------- errors


def test_parse_error_names_line_and_column_of_a_bad_frame_id():
    error = parse_error("(context-tx\n  (base-version 3)\n  (derive Release (k v)))")
    assert (error.line, error.column) == (3, 11)
    assert error.expected == "a frame id"
    assert str(error).startswith('line 3, column 11: expected a frame id, found "Release"')
    assert 'write "release"' in error.message


def test_parse_error_is_a_value_error_with_a_serialisable_summary():
    error = parse_error("(context-tx (retire Bad))")
    assert isinstance(error, TxError)
    assert isinstance(error, ValueError)
    assert error.as_dict() == {
        "message": str(error),
        "line": 1,
        "column": 21,
        "expected": "a ref (@eN or a frame id)",
    }


def test_missing_closing_paren_reports_the_unclosed_form():
    error = parse_error("(context-tx\n  (derive plan (goal ship)\n")
    assert (error.line, error.column) == (3, 1)
    assert error.message.startswith("unexpected end of input: expected")
    assert 'close "(derive" opened at line 2, column 3' in error.message


def test_missing_final_paren_reports_context_tx():
    error = parse_error("(context-tx\n  (retire @e1)")
    assert (error.line, error.column) == (2, 15)
    assert 'close "(context-tx" opened at line 1, column 1' in error.message


def test_unterminated_string_points_at_its_opening_quote():
    error = parse_error('(context-tx\n  (reason "never closed)\n  (retire @e1))')
    assert (error.line, error.column) == (2, 11)
    assert "unterminated string" in error.message


def test_unknown_escape_points_at_the_backslash():
    error = parse_error('(context-tx (reason "a\\qb") (retire @e1))')
    assert (error.line, error.column) == (1, 23)
    assert 'unknown escape "\\q"' in error.message


@pytest.mark.parametrize(
    "escape",
    [r"\u12", r"\uZZZZ", r"\u0000", r"\ud800", r"\udc00", r"\ud800\u0041"],
)
def test_bad_unicode_escapes_are_errors(escape: str):
    error = parse_error(f'(context-tx (reason "ab{escape}") (retire @e1))')
    assert (error.line, error.column) == (1, 24)


def test_unknown_operation_is_named_with_a_suggestion():
    error = parse_error("(context-tx\n  (base_version 3)\n  (retire @e1))")
    assert (error.line, error.column) == (2, 4)
    assert error.message.startswith('unknown operation "base_version"')
    assert 'did you mean "base-version"?' in error.message


def test_trailing_text_after_the_transaction_is_an_error():
    error = parse_error("(context-tx (retire @e1))\n(retire @e2)")
    assert (error.line, error.column) == (2, 1)
    assert "unexpected text after the end of the transaction" in error.message


def test_duplicate_key_points_at_the_second_occurrence():
    error = parse_error("(context-tx (derive f (a (x 1) (y 2) (x 3))))")
    assert (error.line, error.column) == (1, 39)
    assert 'duplicate field "x"' in error.message
    assert "line 1, column 27" in error.message


def test_quoted_and_bare_keys_collide():
    error = parse_error('(context-tx (derive f (k 1) ("k" 2)))')
    assert (error.line, error.column) == (1, 30)


def test_from_after_fields_is_an_error():
    error = parse_error("(context-tx\n  (derive f (k v) (from @e1)))")
    assert (error.line, error.column) == (2, 20)
    assert "must come before the fields" in error.message


def test_a_second_from_clause_is_an_error():
    error = parse_error("(context-tx (revise f (from @e1) (from @e2)))")
    assert (error.line, error.column) == (1, 35)
    assert "only once" in error.message


def test_body_nesting_past_the_limit_is_a_clear_error():
    depth = MAX_BODY_DEPTH
    error = parse_error(tx("(derive f (k " + "[" * depth + "x" + "]" * depth + "))"))
    # The body is level 1 and the n-th "[" (at column 25 + n) opens level n + 1.
    assert (error.line, error.column) == (1, 25 + depth)
    assert f"at most {MAX_BODY_DEPTH} levels" in error.message


def test_too_deep_nesting_through_fields_and_lists_is_caught():
    error = parse_error(tx("(derive f " + "(k " * 40 + "v" + ")" * 40 + ")"))
    assert "nests too deeply" in error.message
    error = parse_error(tx("(derive f (k " + "[x] " + "[" * 40 + "))"))
    assert "nests too deeply" in error.message


def test_a_multi_value_list_counts_one_level_for_its_first_element():
    # (k [..] y) is a list holding [..]; the first element sits one level deeper than (k [..]).
    depth = MAX_BODY_DEPTH - 1
    nested = "[" * depth + "x" + "]" * depth
    assert body_of(f"(k {nested})")
    error = parse_error(tx(f"(derive f (k {nested} y))"))
    assert (error.line, error.column) == (1, 26)


def test_huge_nesting_never_overflows_the_stack():
    for text in ("(" * 100_000, tx("(derive f (k " + "[" * 100_000), "[" * 100_000):
        assert isinstance(parse_error(text), TxParseError)


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("", 1, 1, 'expected "(context-tx" to start the transaction'),
        ("(context-tx)", 1, 12, "needs at least one operation"),
        ("(tx (retire @e1))", 1, 2, 'expected "context-tx"'),
        ("(context-tx retire)", 1, 13, 'expected an operation like "(derive"'),
        ("(context-tx (retire @e1) (base-version 1))", 1, 27, "must come before the operations"),
        ("(context-tx (reason a) (reason b) (retire @e1))", 1, 25, "duplicate header"),
        ("(context-tx (base-version -1) (retire @e1))", 1, 27, "non-negative integer"),
        ("(context-tx (base-version 9223372036854775808) (retire @e1))", 1, 27, "too large"),
        ('(context-tx (base-version "1") (retire @e1))', 1, 27, "non-negative integer"),
        ("(context-tx (reason not quoted) (retire @e1))", 1, 25, "takes a single value"),
        ("(context-tx (thread) (retire @e1))", 1, 20, "a thread name"),
        ("(context-tx (retire))", 1, 20, "needs at least one ref"),
        ("(context-tx (retire @e0))", 1, 21, "without leading zeros"),
        ("(context-tx (retire @E4))", 1, 21, "event ref"),
        ("(context-tx (protect @e4))", 1, 22, "a frame id is needed here"),
        ("(context-tx (relate a b))", 1, 24, "the object frame id"),
        ("(context-tx (relate a Supports b))", 1, 23, "relation name"),
        ("(context-tx (relate a b c d))", 1, 27, "exactly three words"),
        ("(context-tx (relate a @e1 b))", 1, 23, "relation name"),
        ("(context-tx (derive .hidden))", 1, 21, "starts with a lower-case letter or digit"),
        ("(context-tx (derive a/b))", 1, 21, '"/"'),
        ("(context-tx (derive " + "a" * 129 + "))", 1, 21, "at most 128 characters"),
        ("(context-tx (derive f k))", 1, 23, "a field like (key value)"),
        ("(context-tx (derive f (k)))", 1, 25, 'the field "k" has no value'),
        ('(context-tx (derive f ("" v)))', 1, 24, "cannot be empty"),
        ("(context-tx (derive f ([a] v)))", 1, 24, "a field name"),
        ("(context-tx (derive f (k v (x y))))", 1, 28, "cannot also hold (key value) fields"),
        ("(context-tx (derive f (k (x y) v)))", 1, 32, 'a field like (key value) or ")"'),
        ("(context-tx (derive f (k [(x y)])))", 1, 27, "a list holds values"),
        ("(context-tx (derive f (k [a)))", 1, 28, 'expected a value or "]"'),
        ("(context-tx (derive f (k {a})))", 1, 27, 'a field like (key value) or "}"'),
        ("(context-tx (derive f (k ])))", 1, 26, "expected a value"),
        ("(context-tx (derive f (k v\x01)))", 1, 27, "control character U+0001"),
        ("(context-tx (retire @e1\x00))", 1, 24, "NUL"),
        ("(context-tx (retire @e1 \ud800))", 1, 25, "lone surrogate"),
        ('(context-tx (reason "\\', 1, 21, "unterminated string"),
    ],
)
def test_error_positions(text: str, line: int, column: int, fragment: str):
    error = parse_error(text)
    assert (error.line, error.column) == (line, column), str(error)
    assert fragment in error.message, str(error)


def test_columns_count_characters_not_bytes():
    error = parse_error('(context-tx (reason "测试") (derive Bad))')
    assert (error.line, error.column) == (1, 35)


def test_a_leading_byte_order_mark_is_ignored():
    assert parse_text("\ufeff" + tx("(retire @e1)"))["ops"] == [{"op": "retire", "refs": ["@e1"]}]


def test_parse_text_refuses_non_strings():
    with pytest.raises(TypeError):
        parse_text(b"(context-tx (retire @e1))")  # type: ignore[arg-type]
