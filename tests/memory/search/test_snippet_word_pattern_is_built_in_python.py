"""An event's snippet opens at the query word as a PostgreSQL regular expression finds it
(`ranking_sql.PAGE`); the word's pattern is escaped in Python (`snippets.word_pattern`), not
by `regexp_replace` with a `[^[:alnum:]_]` class in SQL, which once spun without end in
PostgreSQL's regex engine. Both find every word at the same place."""

from __future__ import annotations

from typing import Any

import pytest
from django.db import connection

from memory.search.snippets import word_pattern

WORDS = ["kestrel", "c++", "node.js", "a(b)c", "don’t", "x|y", "$5", "a*b?", "[x]", "日本語", "k8s"]


@pytest.mark.parametrize("word", WORDS)
def test_the_pattern_finds_the_word_where_the_sql_escape_did(db: Any, word: str) -> None:
    text = f"see {word}s and then {word} here".replace("’", "'")
    with connection.cursor() as cursor:
        cursor.execute(
            r"""SELECT regexp_instr(%(text)s, '\m' || %(pattern)s || '\M'),
                       regexp_instr(%(text)s, '\m' || regexp_replace(
                         translate(%(word)s, U&'\2018\2019', ''''''),
                         '([^[:alnum:]_])', '\\\1', 'g') || '\M')""",
            {"text": text, "pattern": word_pattern(word), "word": word},
        )
        ours, theirs = cursor.fetchone()
    assert ours == theirs


def test_only_ascii_punctuation_is_escaped() -> None:
    assert word_pattern("c++") == r"c\+\+"
    assert word_pattern("日本語_x1") == "日本語_x1"
    assert word_pattern("don’t") == r"don\'t"
