"""A possessive is the noun's own form (R62's stems): "customer" finds "the customer's
refund", "buyer" finds "the buyer’s offer" with either apostrophe, a name finds its
possessive. Snowball's English stemmer strips the possessive (`vectors.stem`). Documents
indexed before are queued for the worker (migration 0036)."""

from __future__ import annotations

import importlib

from django.db import connection

from memory.models import IndexIntent
from memory.search.indexer import drain
from memory.search.query import search


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_noun_finds_its_possessive_with_either_apostrophe(release_team):
    agent = release_team
    refund = agent.observe("The customer's refund was approved by Margaret's team")
    offer = agent.observe("We accepted the buyer\u2019s offer on Tuesday")
    agent.observe("an unrelated note about the weather")
    drain()
    for query in ("customer", "customers", "margaret", "customer refund"):
        assert refs(search(agent.context, query))[:1] == [refund], query
    for query in ("buyer", "buyers", "buyer's"):
        assert refs(search(agent.context, query))[:1] == [offer], query
    covered = search(agent.context, "customer refund")["hits"][0]["coverage"]
    assert covered["missing"] == [], covered


def test_a_contraction_is_not_split_into_a_word(release_team):
    agent = release_team
    agent.observe("don't deploy on fridays")
    drain()
    assert refs(search(agent.context, "don")) == []


def test_documents_indexed_before_are_queued_again(release_team):
    migration = importlib.import_module("memory.migrations.0036_search_possessive_stems")
    agent = release_team
    possessive = agent.observe("the customer\u2019s refund")
    plain = agent.observe("the invoice is overdue")
    drain()
    with connection.cursor() as cursor:
        cursor.execute(migration.QUEUE)
    queued = {i.event.ref for i in IndexIntent.objects.filter(context=agent.context) if i.event}
    assert possessive in queued and plain not in queued
