"""A snippet marks a query word written with an invisible format character inside it (a
zero-width space, which ICU's segments split at): the index reads the word without it, so
the hit is found by the word, and its snippet shows where."""

from __future__ import annotations

from memory.search.snippets import snippet


def marked(text: str, word: str) -> list[str]:
    return [part["text"] for part in snippet(text, [word])["parts"] if part["match"]]


def test_a_zero_width_space_inside_a_word_is_marked_with_the_word() -> None:
    assert marked("the quan\u200btum register overflowed", "quantum") == ["quan\u200btum"]


def test_format_characters_between_words_stay_between_them() -> None:
    text = "tea\u200b \u200bcake"
    assert marked(text, "tea") == ["tea"]
    assert "".join(p["text"] for p in snippet(text, ["tea"])["parts"]) == text


def test_a_text_ending_in_format_characters_is_shown_whole() -> None:
    text = "gir\u200baffe\u200b"
    assert marked(text, "giraffe") == ["gir\u200baffe"]
    assert snippet(text, ["giraffe"])["snippet"] == text
