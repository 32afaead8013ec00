"""The tokenizer (one regular expression per token, `memory.tx.lang.tokens`) reads comments,
CRLF, tabs, a byte-order mark, Unicode spaces and escapes as the character-by-character
tokenizer it replaced did, and reports every error at the same line and column (R9).
The expected values were taken from that tokenizer."""

from __future__ import annotations

import pytest

from memory.tx.lang import TxParseError, parse_text

PARSED = [
    (
        '\ufeff(context-tx ; a comment; with "quotes"\r\n  (derive a (k "v;not a comment")))',
        [{"op": "derive", "id": "a", "from": [], "body": {"k": "v;not a comment"}}],
    ),
    (
        "(context-tx\r\n\t(derive a (k\tv))\r\n\t(retire a)) ; trailing",
        [
            {"op": "derive", "id": "a", "from": [], "body": {"k": "v"}},
            {"op": "retire", "refs": ["a"]},
        ],
    ),
    (
        '(context-tx (derive a (k "line\nbreak" x\x85y)))',
        [{"op": "derive", "id": "a", "from": [], "body": {"k": ["line\nbreak", "x", "y"]}}],
    ),
    (
        "(context-tx\u2028(derive a (k v)))",
        [{"op": "derive", "id": "a", "from": [], "body": {"k": "v"}}],
    ),
    (
        '(context-tx ;; (derive a (k "x\n  (derive b (k\t"é\\u00e9😀\\ud83d\\ude00")) ; ) \n)',
        [{"op": "derive", "id": "b", "from": [], "body": {"k": "éé😀😀"}}],
    ),
]

FAILING = [
    ("(context-tx (derive a (k v\x01w)))", 1, 27, "control character U+0001"),
    ('(context-tx\n  (derive a (k "tab\\q")))', 2, 20, 'unknown escape "\\q"'),
    ('(context-tx\n  (derive a (k "unterminated\n  more', 2, 16, "unterminated string"),
    ('(context-tx (derive a (k "\\u12")))', 1, 27, "\\u must be followed"),
    ('(context-tx\n\n   (derive a (k "\\ud800")))', 3, 18, "a lone surrogate (U+D800)"),
    ("(context-tx\r\n  (derive a (k v\x7f)))", 2, 17, "control character U+007F"),
    ("(context-tx (derive a (k v)));\x00", 1, 31, "a NUL character"),
    ("\ufeff\ufeff(context-tx (derive a (k v)))", 1, 1, 'expected "(context-tx"'),
]


@pytest.mark.parametrize(("text", "ops"), PARSED)
def test_spaces_comments_and_escapes_read_as_before(text, ops):
    assert parse_text(text)["ops"] == ops


@pytest.mark.parametrize(("text", "line", "column", "message"), FAILING)
def test_errors_are_reported_where_they_were(text, line, column, message):
    with pytest.raises(TxParseError) as raised:
        parse_text(text)
    assert (raised.value.line, raised.value.column) == (line, column)
    assert raised.value.message.startswith(message)
