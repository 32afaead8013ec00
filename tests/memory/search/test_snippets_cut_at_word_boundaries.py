"""A snippet starts and ends at word boundaries (ICU's segments, the ones the index saw):
it never shows part of a word, at either end, in any script, also when the window it is
cut from was itself cut out of a longer text. Before, a snippet was cut at a character
count and opened or closed mid-word ("…bet35 alphabet36 … omegaword…")."""

from __future__ import annotations

import random
from typing import Any

from memory.search.indexer import drain
from memory.search.query import search
from memory.search.snippets import snippet
from memory.search.textindex import segments


def shown(result: dict[str, Any]) -> str:
    """The snippet without its ellipses."""
    return "".join(p["text"] for p in result["parts"] if p["text"] != "…")


def boundaries(text: str) -> set[int]:
    found, at = {0}, 0
    for segment in segments(text):
        at += len(segment)
        found.add(at)
    return found


def assert_whole_segments(text: str, piece: str, cut_before: bool = False) -> None:
    start = text.find(piece, 1 if cut_before else 0)
    assert start >= 0, piece
    assert {start, start + len(piece)} <= boundaries(text), (text, piece)


def test_a_snippet_of_a_long_text_starts_and_ends_with_whole_words():
    text = " ".join(f"alphabet{i}" for i in range(40)) + " target "
    text += " ".join(f"omegaword{i}" for i in range(40))
    result = snippet(text, ["target"])
    words = shown(result).split()
    assert "target" in words and set(words) <= set(text.split())
    assert result["parts"][0]["text"] == "…" and result["parts"][-1]["text"] == "…"
    assert not shown(result).startswith(" ") and not shown(result).endswith(" ")


def test_chinese_and_japanese_snippets_are_cut_between_words():
    for text, word in [
        ("日本語のテキストです。" * 10 + "東京" + "日本語のテキストです。" * 30, "東京"),
        (
            "测试结果已吸收，继续准备发布。" * 12 + "回滚" + "测试结果已吸收，继续准备发布。" * 20,
            "回滚",
        ),
    ]:
        result = snippet(text, [word])
        assert word in shown(result)
        assert_whole_segments(text, shown(result))


def test_random_texts_and_widths_never_show_part_of_a_word():
    rng = random.Random(7)
    vocabulary = ["deploy", "rollback_plan", "v1.2.3", "Kubernetes", "결과를", "发布", "ok", "—"]
    for _ in range(300):
        words = [rng.choice(vocabulary) + str(rng.randrange(100)) for _ in range(60)]
        text = " ".join(words)
        wanted = [rng.choice(words).lower()]
        result = snippet(text, wanted, width=rng.randrange(20, 120))
        assert_whole_segments(text, shown(result))


def test_a_window_cut_out_of_a_longer_text_drops_its_partial_first_and_last_words():
    window = "ial notes before the target and words after it, up to a cut_of"
    result = snippet(window, ["target"], width=500, cut_before=True, cut_after=True)
    assert shown(result) == "notes before the target and words after it, up to a"
    assert result["parts"][0]["text"] == "…" and result["parts"][-1]["text"] == "…"


def test_hits_of_a_long_event_and_a_long_frame_open_and_close_on_whole_words(release_team):
    agent = release_team
    # The first "order" in the text is inside "reordering": the window the database cuts
    # opens 60 characters before it, mid-word, and the snippet finds no whole match there.
    head = " ".join(f"prelude{i}" for i in range(30))
    tail = " ".join(f"postlude{i}" for i in range(60))
    content = f"{head} reordering happened {tail} order confirmed {tail}"
    event = agent.observe(content, kind="agent_message")
    body = " ".join(f"clause{i}" for i in range(60)) + " escrow " + tail
    agent.commit(f'(context-tx (derive contract (terms "{body}")))')
    drain()
    for q, ref, text in [("order", event, content), ("escrow", "contract", body)]:
        hits = [h for h in search(agent.context, q)["hits"] if h["ref"] == ref]
        parts = hits[0]["snippet_parts"]
        piece = "".join(p["text"] for p in parts if p["text"] != "…")
        assert parts[0]["text"] == "…" and parts[-1]["text"] == "…"
        assert set(piece.split()) <= set(text.split()) | {"terms:", "contract"}, piece


def test_a_hit_opens_at_the_query_word_not_at_a_longer_word_holding_it(release_team):
    agent = release_team
    # "art" is first inside "restart", 300 words before the word itself: the window opened
    # at "restart" and the snippet showed no match at all.
    filler = " ".join(f"step{i}" for i in range(300))
    text = f"we will restart the server, {filler}, then visit the art museum downtown"
    event = agent.observe(text)
    agent.commit(f'(context-tx (derive plans (text "{text}")))')
    drain()
    hits = search(agent.context, "art")["hits"]
    assert {h["ref"] for h in hits} == {event, "plans"}
    for hit in hits:
        matches = [p["text"] for p in hit["snippet_parts"] if p["match"]]
        assert matches == ["art"], hit["snippet"]


def test_a_hit_opens_at_the_word_written_with_another_apostrophe(release_team):
    agent = release_team
    # `don't` finds `don’t` (search.md); the window looked for `don't` as typed, found it
    # nowhere and opened at the start, 300 words before the match.
    filler = " ".join(f"step{i}" for i in range(300))
    text = f"notes {filler}, and the customer says they don\u2019t want the upgrade"
    event = agent.observe(text)
    agent.commit(f'(context-tx (derive wishes (text "{text}")))')
    drain()
    hits = search(agent.context, "don't")["hits"]
    assert {h["ref"] for h in hits} == {event, "wishes"}
    for hit in hits:
        matches = [p["text"] for p in hit["snippet_parts"] if p["match"]]
        assert "don\u2019t" in matches, hit["snippet"]
