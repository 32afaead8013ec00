"""The answer's `query.tokens` are the words the search used, and `query.ignored` the words
of a very long question past the SCORED_CLAUSES that score. Before, `tokens` listed every
word, also those the ranking never looked at. A query has no operators: quotes, `-`, `&`,
`|`, `!` and `:*` are punctuation and `OR`, `AND`, `NOT` function words (docs/search.md)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.search.indexer import drain
from memory.search.query import search
from memory.search.ranking import SCORED_CLAUSES

# SCORED_CLAUSES - 1 distinct words, each among function words that do not use up the limit.
FILLER = " ".join(f"word{i} the of a to" for i in range(SCORED_CLAUSES - 1))


def test_tokens_stop_at_the_words_that_score_and_the_rest_are_said_ignored(
    release_team: Any,
) -> None:
    result = search(release_team.context, f"{FILLER} quokka wombat numbat quokka")
    tokens = result["query"]["tokens"]
    assert len(tokens) == SCORED_CLAUSES
    assert tokens[-1] == "quokka" and "wombat" not in tokens
    assert result["query"]["ignored"] == ["wombat", "numbat"]


def test_an_ignored_word_is_not_highlighted(release_team: Any) -> None:
    agent = release_team
    both = agent.observe("quokka and wombat sightings", kind="agent_message")
    drain()
    result = search(agent.context, f"{FILLER} quokka wombat")
    assert [h["ref"] for h in result["hits"]] == [both]
    marked = [p["text"] for p in result["hits"][0]["snippet_parts"] if p["match"]]
    assert marked == ["quokka"]


def test_a_usual_query_ignores_nothing(release_team: Any) -> None:
    result = search(release_team.context, "When can I get my refund?")
    assert result["query"] == {
        "q": "When can I get my refund?",
        "tokens": ["when", "can", "get", "my", "refund"],
        "ignored": [],
    }


@pytest.mark.parametrize(
    ("q", "tokens"),
    [
        ("-refund", ["refund"]),
        ("cancel & !refund", ["cancel", "refund"]),
        ("cancel | refund", ["cancel", "refund"]),
        ("cancel OR refund", ["cancel", "refund"]),
        ("cancel AND NOT refund", ["cancel", "refund"]),
        ('"cancel order"', ["cancel", "order"]),
        ("canc:*", ["canc"]),
    ],
)
def test_query_operators_are_read_as_plain_words(
    release_team: Any, q: str, tokens: list[str]
) -> None:
    assert search(release_team.context, q)["query"]["tokens"] == tokens
