"""A reply's length counts the words it borrows from the turn it answers
(`vectors.event_vector`): it stands for both, so a short reply lending a whole question's
words is scored as the longer text it stands for, not as a short document saying them all.
Replies indexed before are queued for the worker (migration 0035)."""

from __future__ import annotations

import importlib

from django.db import connection

from memory.models import IndexIntent
from memory.search.indexer import drain
from memory.search.query import search
from memory.search.vectors import event_vector


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_the_length_of_a_reply_counts_the_turn_it_answers():
    turn = "Shall I return the wireless headphones from order ORD-7125 for you?"
    alone = event_vector("user_message", "Yes please", None)
    with_turn = event_vector("user_message", "Yes please", None, turn)
    assert with_turn.length == alone.length + event_vector("agent_message", turn, None).length


def test_a_short_reply_does_not_outrank_a_request_saying_the_words_itself(release_team):
    # STATE-Bench's failure: "Yes, the headphones" borrowing "return ... order" from the
    # agent's question scored as a three-word document saying them all.
    agent = release_team
    request = agent.observe(
        "I would like to return the headphones from my order, they stopped working after a "
        "week and the left side crackles",
        kind="user_message",
        thread="a",
    )
    agent.observe("Which item from which order should I return?", kind="agent_message", thread="b")
    reply = agent.observe("Yes, the headphones", kind="user_message", thread="b")
    drain()
    ranked = refs(search(agent.context, "return the headphones from my order"))
    assert ranked.index(request) < ranked.index(reply)


def test_replies_indexed_before_are_queued_again(release_team):
    migration = importlib.import_module("memory.migrations.0035_search_reply_length")
    agent = release_team
    agent.observe("Have you painted anything lately?", kind="agent_message")
    reply = agent.observe("Yes, last week!", kind="user_message")
    plain = agent.observe("the invoice is overdue", kind="tool_result")
    drain()
    with connection.cursor() as cursor:
        cursor.execute(migration.QUEUE)
    queued = {i.event.ref for i in IndexIntent.objects.filter(context=agent.context) if i.event}
    assert reply in queued and plain not in queued
