"""The text pipeline shared by indexing and queries (R33): NFKC, case folding, ICU words."""

from __future__ import annotations

import random

from django.db import connection

from memory.search.snippets import snippet
from memory.search.textindex import icu_tokens, normalise, tokens
from memory.search.vectors import tsquery_literal, tsvector_literal


def test_chinese_is_segmented_into_dictionary_words():
    assert tokens("发布任务") == ["发布", "任务"]
    assert tokens("测试结果已吸收，继续准备发布") == [
        "测试",
        "结果",
        "已",
        "吸收",
        "继续",
        "准备",
        "发布",
    ]


def test_japanese_is_segmented_into_words():
    assert tokens("テストを実行しました") == ["テスト", "を", "実行", "しま", "した"]


def test_full_width_and_case_fold_to_the_same_token():
    assert normalise("ＡＰＩ") == "api"
    assert tokens("ＡＰＩ Gateway") == tokens("api GATEWAY") == ["api", "gateway"]
    assert tokens("Straße") == tokens("STRASSE") == ["strasse"]


def test_spaces_punctuation_and_symbols_are_not_tokens():
    assert tokens("Hello, World! -- (ok) 😀 ...") == ["hello", "world", "ok"]


def test_numbers_identifiers_and_refs_stay_whole():
    assert tokens("v1.5 test_0001 @e42 dist/") == ["v1.5", "test_0001", "e42", "dist"]


def test_query_and_document_use_the_same_pipeline():
    assert tokens("Release-Procedure") == tokens("release-procedure") == ["release", "procedure"]


def test_lexemes_with_quotes_and_backslashes_round_trip_through_postgresql(db):
    words = ["it's", "a\\b", "发布"]
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT %s::tsvector @@ %s::tsquery",
            [tsvector_literal(words), tsquery_literal(["it's", "发布"])],
        )
        assert cursor.fetchone()[0] is True
        cursor.execute(
            "SELECT %s::tsvector @@ %s::tsquery",
            [tsvector_literal(words), tsquery_literal(["a\\b"])],
        )
        assert cursor.fetchone()[0] is True


def test_snippet_marks_matches_as_parts_without_markup():
    shown = snippet("构建完成，发布任务已排队 <b>ok</b>", ["发布"])
    assert shown["snippet"] == "构建完成，发布任务已排队 <b>ok</b>"
    assert [p for p in shown["parts"] if p["match"]] == [{"text": "发布", "match": True}]


def test_snippet_is_a_window_around_the_first_match():
    text = "filler " * 100 + "the ＡＰＩ answered" + " tail" * 100
    shown = snippet(text, ["api"])
    assert len(shown["snippet"]) < 260
    assert shown["parts"][0]["text"] == "…" and shown["parts"][-1]["text"] == "…"
    assert {"text": "ＡＰＩ", "match": True} in shown["parts"]


FUZZ_ALPHABET = (
    "aZ9_.:,;'\" \t\r\n-@/!$#x1"  # ASCII word characters and every ASCII joiner
    "’‘—→“”≤–×−★‐·‧﹒．éÉe\u0301\u200d\ufe0f\u00a0\u3000中文发布テストをｶ한글ＡＰＩ①ß😀🇫🇷\u0308"
)


def test_the_ascii_fast_path_gives_exactly_the_icu_tokens():
    """`tokens` skips ICU for ASCII stretches; it must agree with ICU on every input."""
    rng = random.Random(42)
    for _ in range(20000):
        text = "".join(rng.choice(FUZZ_ALPHABET) for _ in range(rng.randint(1, 24)))
        assert tokens(text) == icu_tokens(text), text
    words = [
        "don't",
        "e.g.",
        "1,000.5",
        "a:b",
        "test_0007",
        "@e42",
        "x.com/a-b",
        "3'4",
        "’",
        "发布",
    ]
    for _ in range(2000):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 12)))
        assert tokens(text) == icu_tokens(text), text


def test_long_mixed_text_is_cut_into_chunks_without_changing_the_icu_tokens():
    """Non-ASCII text goes to ICU a paragraph at a time, cut only before long ASCII runs."""
    rng = random.Random(7)
    words = ["결과를", "확인했다", "発布", "テスト", "don't", "x.com/a-b", "1,000.5", "é", "—"]
    words.append("plain ascii words for a long stretch of english text here and there")
    for _ in range(300):
        text = " ".join(rng.choice(words) for _ in range(rng.randint(1, 40)))
        assert tokens(text) == icu_tokens(text), text


def test_index_terms_are_the_pipeline_terms_with_parts_marked_secondary():
    # index_terms has its own fast path for lower-case identifiers (giant logs): it must
    # give exactly the pipeline's terms, every part marked and every word not.
    from memory.search.textindex import SECONDARY, index_terms, terms

    rng = random.Random(7)
    alphabet = "abcXYZ019_.:,;'-/ é결과"
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16)))
        lexemes, words = index_terms(text)
        assert [lexeme.removeprefix(SECONDARY) for lexeme in lexemes] == terms(text), text
        assert words == sum(not lexeme.startswith(SECONDARY) for lexeme in lexemes), text


def test_a_log_past_postgresqls_last_position_is_indexed_to_its_end(release_team):
    from memory.search.indexer import drain
    from memory.search.query import search

    log = " ".join(f"line_{i}" for i in range(20_000)) + " finalword"
    ref = release_team.observe(log)
    drain()
    assert [h["ref"] for h in search(release_team.context, "finalword")["hits"]] == [ref]
    assert [h["ref"] for h in search(release_team.context, "line_19999")["hits"]] == [ref]


def test_ascii_snippets_are_the_same_as_with_icu_segments(monkeypatch):
    # Snippets of ASCII text skip ICU (the tokenizer's fast path): the parts must not change.
    from memory.search import snippets
    from memory.search.textindex import segments

    rng = random.Random(5)
    alphabet = "abcXYZ019_.:,;'-/ \n()\"=<>"
    texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(1, 300))) for _ in range(500)]
    wanted = [["abc", "x", "b1"], ["c_9", "xyz"], ["ab", "a", "zz"]]
    fast = [snippets.snippet(t, wanted[i % 3]) for i, t in enumerate(texts)]
    monkeypatch.setattr(snippets, "_ascii_segments", segments)
    assert fast == [snippets.snippet(t, wanted[i % 3]) for i, t in enumerate(texts)]
