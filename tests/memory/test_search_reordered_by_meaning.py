"""A question in plain words: of the documents that match it equally well by their words,
the one about the question comes first (memory.search.semantic); a word or two keeps the
lexical order; pages stay consistent across the reordered head."""

from __future__ import annotations

from memory.models import SearchDocument
from memory.search import semantic
from memory.search.documents import embed_missing
from memory.search.indexer import drain
from memory.search.query import search

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


def test_pages_across_the_reordered_head_are_one_ranking(release_team):
    agent = release_team
    for n in range(semantic.HEAD + 15):
        topic = ("refund for a broken parcel", "stock prices on the trading floor")[n % 3 == 0]
        agent.observe(f"note {n}: money {'and more money ' * (n % 4)}{topic}", kind="agent_message")
    drain()
    whole = search(agent.context, QUESTION, limit=100)
    assert len(whole["hits"]) == semantic.HEAD + 15
    paged, offset = [], 0
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
