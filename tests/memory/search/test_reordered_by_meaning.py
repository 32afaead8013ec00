"""A question in plain words: of the documents that match it equally well by their words,
the one about the question comes first (memory.search.semantic); a word or two keeps the
lexical order; pages stay consistent across the reordered head."""

from __future__ import annotations

from typing import Any

import pytest

from memory.contexts import create_context
from memory.models import SearchDocument
from memory.search import semantic
from memory.search.documents import embed_missing
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.events import append_event
from memory.versions.forks import fork_context
from tests.memory.conftest import running_indexer

QUESTION = "get my money back, the item arrived broken"
ABOUT_IT = "refund requested: customer says the parcel was damaged, wants money returned"
ONLY_SHARES_A_WORD = "money market weather: sunny skies over the trading floor, calm day"


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_question_finds_the_document_about_it_before_one_that_only_shares_its_word(
    release_team,
):
    agent = release_team
    about = agent.observe(ABOUT_IT, kind="agent_message")
    other = agent.observe(ONLY_SHARES_A_WORD, kind="agent_message")  # newer: first on a tie
    drain()
    hits = search(agent.context, QUESTION)["hits"]
    assert [h["ref"] for h in hits] == [about, other]
    assert hits[0]["score"] > hits[1]["score"]  # scores say the order


def test_one_or_two_words_keep_the_lexical_order(release_team):
    agent = release_team
    about = agent.observe(ABOUT_IT, kind="agent_message")
    other = agent.observe(ONLY_SHARES_A_WORD, kind="agent_message")
    drain()
    # "money back": a lookup, not a question; equal matches newest first, as without meaning.
    assert refs(search(agent.context, "money back")) == [other, about]


def test_an_identifier_of_many_parts_is_a_lookup_not_a_question(release_team):
    agent = release_team
    about = agent.observe("refund-money-parcel-broken " + ABOUT_IT, kind="agent_message")
    other = agent.observe("refund-money-parcel-broken " + ONLY_SHARES_A_WORD, kind="agent_message")
    drain()
    # Four words, none apart: equal matches newest first, whatever the embeddings say.
    assert refs(search(agent.context, "refund-money-parcel-broken"))[:2] == [other, about]


def test_the_frame_named_by_a_question_stays_first(release_team):
    agent = release_team
    agent.observe(ABOUT_IT, kind="agent_message")
    agent.commit('(context-tx (derive money-market-weather (text "sunny skies")))')
    drain()
    hits = search(agent.context, "money market weather")["hits"]
    assert hits[0]["ref"] == "money-market-weather"
    assert hits[0]["score"] > max(h["score"] for h in hits[1:])


def test_pages_across_the_reordered_head_are_one_ranking(release_team):
    agent = release_team
    for n in range(semantic.HEAD + 15):
        topic = ("refund for a broken parcel", "stock prices on the trading floor")[n % 3 == 0]
        agent.observe(f"note {n}: money {'and more money ' * (n % 4)}{topic}", kind="agent_message")
    drain()
    whole = search(agent.context, QUESTION, limit=100)
    assert len(whole["hits"]) == semantic.HEAD + 15
    paged: list[Any] = []
    offset: int | None = 0
    while offset is not None:
        page = search(agent.context, QUESTION, limit=7, offset=offset)
        assert len(page["hits"]) <= 7
        paged += page["hits"]
        offset = page["next_offset"]
    assert [h["ref"] for h in paged] == refs(whole)
    scores = [h["score"] for h in whole["hits"]]
    assert scores == sorted(scores, reverse=True)


def test_documents_are_embedded_when_indexed_and_transaction_events_are_not(release_frame):
    agent = release_frame
    drain()
    documents = SearchDocument.objects.filter(context=agent.context)
    embedded = {d.kind: d.embedding for d in documents}
    assert len(bytes(embedded["frame"])) == semantic.DIMENSIONS * 2
    assert len(bytes(embedded["tool_result"])) == semantic.DIMENSIONS * 2
    assert embedded["transaction"] is None


def test_documents_indexed_before_embeddings_get_them_from_the_worker(release_team):
    agent = release_team
    agent.observe(ABOUT_IT, kind="agent_message")
    drain()
    document = SearchDocument.objects.get(context=agent.context, kind="agent_message")
    fresh = bytes(document.embedding)
    SearchDocument.objects.filter(pk=document.pk).update(embedding=None)
    assert embed_missing() == 1
    document.refresh_from_db()
    assert bytes(document.embedding) == fresh
    assert embed_missing() == 0


def test_with_meaning_off_nothing_is_embedded_and_words_alone_rank(release_team, settings):
    settings.MORPHZ_SEARCH_MEANING = False
    agent = release_team
    about = agent.observe(ABOUT_IT, kind="agent_message")
    other = agent.observe(ONLY_SHARES_A_WORD, kind="agent_message")
    drain()
    assert refs(search(agent.context, QUESTION)) == [other, about]
    assert not SearchDocument.objects.filter(
        context=agent.context, embedding__isnull=False
    ).exists()
    assert embed_missing() == 0


def test_a_fork_keeps_its_sources_embeddings_and_order(release_team):
    agent = release_team
    agent.observe(ABOUT_IT, kind="agent_message")
    agent.observe(ONLY_SHARES_A_WORD, kind="agent_message")
    drain()
    fork = fork_context(agent.context).context
    drain()
    copied = SearchDocument.objects.filter(context=fork).exclude(kind="transaction")
    assert copied.exists() and not copied.filter(embedding__isnull=True).exists()
    assert refs(search(fork, QUESTION)) == refs(search(agent.context, QUESTION))


def test_the_worker_embeds_older_documents_when_its_outbox_is_empty(transactional_db):
    # The worker runs on its own connection: the data must be committed.
    context = create_context("embedded-later")
    append_event(context.pk, kind="agent_message", content=ABOUT_IT)
    drain()
    SearchDocument.objects.filter(context=context).update(embedding=None)
    missing = SearchDocument.objects.filter(context=context, embedding__isnull=True)
    with running_indexer() as wait_until:
        wait_until(lambda: not missing.exists())
    assert not missing.exists()


def test_with_meaning_off_the_model_is_never_used(release_team, settings, monkeypatch):
    def no_model():
        raise AssertionError("the model was used with MORPHZ_SEARCH_MEANING off")

    settings.MORPHZ_SEARCH_MEANING = False
    monkeypatch.setattr(semantic, "_wordllama", no_model)
    agent = release_team
    agent.observe(ABOUT_IT, kind="agent_message")
    drain()
    assert refs(search(agent.context, QUESTION))


@pytest.mark.parametrize(
    ("q", "question"),
    [
        ("get my money back", True),
        ("payment-service-timeout retry", False),  # two pieces apart
        ("src/memory/search/ranking.py", False),
        ("the of and", False),  # function words only
        ("the money and the parcel", False),  # two words that count
    ],
)
def test_which_queries_are_questions(q, question):
    from memory.search import query, textindex

    words = [c for c in textindex.query_clauses(q) if not query.is_stop_word(c[0])]
    assert semantic.is_question(q, len(words)) is question
