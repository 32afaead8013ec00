"""Reply context is on by default, and only a short question looks for the words a reply
borrowed from the turn it answers (`documents.borrowing`): a long message matches on its
own words."""

from __future__ import annotations

from memory.search import documents
from memory.search.indexer import drain
from memory.search.query import search


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_reply_context_is_on_by_default():
    from django.conf import settings as django_settings

    assert django_settings.MORPHZ_SEARCH_REPLY_CONTEXT is True
    assert documents.reply_context() is True


def test_a_short_question_finds_a_reply_by_the_turn_it_answers(release_team):
    agent = release_team
    agent.observe("Have you painted anything lately?", kind="agent_message")
    reply = agent.observe("Yes, a sunset over the lake, last week!", kind="user_message")
    drain()
    assert reply in refs(search(agent.context, "when did she paint"))


def test_a_long_message_does_not_count_words_a_reply_borrowed(release_team):
    agent = release_team
    agent.observe("Have you painted anything lately?", kind="agent_message")
    reply = agent.observe("Yes, a sunset over the lake, last week!", kind="user_message")
    drain()
    words = "painted walls kitchen ceiling primer brushes rollers tape ladder drop cloth colour"
    assert len(words.split()) > documents.QUESTION_WORDS
    # Only "painted" links the message to the reply, and only through the turn it answers.
    assert reply not in refs(search(agent.context, words))
    # The same word in a short question does.
    assert reply in refs(search(agent.context, "painted walls"))


def test_with_reply_context_off_no_question_looks_in_replies(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = False
    agent = release_team
    agent.observe("Have you painted anything lately?", kind="agent_message")
    reply = agent.observe("Yes, a sunset over the lake, last week!", kind="user_message")
    drain()
    assert reply not in refs(search(agent.context, "when did she paint"))
