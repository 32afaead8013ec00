"""Erasure (R64) reaches the replies that borrowed the erased words: search indexes a reply
with the words of the turn it answers (reply context, R62), so when that turn is erased,
whole or by a pattern, the reply's document is rebuilt from the masked facts at once: no
search finds the reply by an erased word, in the context, its forks, or a fork made
later."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context
from memory.erasure.erase import erase
from memory.models import Context, SearchDocument
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.events import append_event
from memory.versions.forks import fork_context

QUESTION = "Should we hike near Zephyrine lake with Snodgrass?"
ERASED_WORDS = ["Snodgrass", "Zephyrine", "hike", "lake"]


def _refs(context: Context, q: str) -> list[str]:
    return [hit["ref"] for hit in search(context, q)["hits"]]


def _found_by(context: Context, words: list[str]) -> dict[str, list[str]]:
    """Each word the context's search finds something by, with the refs it finds."""
    return {word: refs for word in words if (refs := _refs(context, word))}


@pytest.fixture
def hike(db: Any, settings: Any) -> Context:
    """@e1 a short question naming a person and places, @e2 the agent's reply to it (which
    says none of them); indexed."""
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    context = create_context("hike", capacity_tokens=50_000)
    append_event(context.pk, kind="user_message", thread="hike", content=QUESTION)
    append_event(
        context.pk,
        kind="agent_message",
        thread="hike",
        content="yes, the Dolomites it is",
        delivers=["@e1"],
    )
    drain(context_id=context.pk)
    # The reply is found by the words it borrowed: what the erasure must take away.
    assert "@e2" in _refs(context, "Snodgrass")
    return context


def test_erasing_a_turn_rebuilds_the_reply_that_borrowed_its_words(hike: Context) -> None:
    erase(hike.pk, refs=["@e1"], reason="gdpr", erased_by="ada")
    drain(context_id=hike.pk)
    assert _found_by(hike, ERASED_WORDS) == {}
    reply = SearchDocument.objects.get(context=hike, ref="@e2")
    assert "snodgrass" not in reply.tokens.lower()
    assert "zephyrine" not in reply.tokens.lower()
    # Rebuilt, not dropped: the reply is found by its own words.
    assert _refs(hike, "Dolomites") == ["@e2"]


def test_a_pattern_erasure_rebuilds_replies_that_borrowed_the_masked_words(
    hike: Context,
) -> None:
    erase(hike.pk, patterns=["Snodgrass"], reason="gdpr", erased_by="ada")
    assert _found_by(hike, ["Snodgrass"]) == {}
    # The rest of the turn is still lent: only the masked span left the reply.
    assert "@e2" in _refs(hike, "Zephyrine")
    assert "@e2" in _refs(hike, "Dolomites")


def test_a_fork_made_after_the_erasure_holds_no_borrowed_erased_word(hike: Context) -> None:
    erase(hike.pk, refs=["@e1"], reason="gdpr", erased_by="ada")
    fork = fork_context(hike.pk, slug="hike-later").context
    drain(context_id=fork.pk)
    assert _found_by(fork, ERASED_WORDS) == {}
    assert _refs(fork, "Dolomites") == ["@e2"]


def test_forks_made_before_the_erasure_have_their_replies_rebuilt(hike: Context) -> None:
    fork = fork_context(hike.pk, slug="hike-earlier").context
    drain(context_id=fork.pk)
    assert "@e2" in _refs(fork, "Snodgrass")
    erase(fork.pk, patterns=["Snodgrass", "Zephyrine"], reason="gdpr", erased_by="ada")
    for context in (hike, fork):
        assert _found_by(context, ["Snodgrass", "Zephyrine"]) == {}, context.slug
        assert "@e2" in _refs(context, "lake"), context.slug
