"""`istanbul` finds `İstanbul` and back: Unicode's default case folding writes the capital
dotted I as `i` and a combining dot above, which no typed `istanbul` holds, so the dot is
dropped from a folded `i` (`textindex.normalise`). Documents indexed before are queued for
the worker (migration 0037)."""

from __future__ import annotations

import importlib

from django.db import connection

from memory.models import IndexIntent
from memory.search.indexer import drain
from memory.search.query import search


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_typed_i_finds_a_dotted_capital_and_back(release_team):
    agent = release_team
    dotted = agent.observe("The team meets in İSTANBUL next week")
    plain = agent.observe("flights to istanbul are booked")
    drain()
    for query in ("istanbul", "Istanbul", "İstanbul", "İSTANBUL"):
        assert sorted(refs(search(agent.context, query))) == sorted([dotted, plain]), query
    marked = [
        p["text"]
        for h in search(agent.context, "istanbul")["hits"]
        if h["ref"] == dotted
        for p in h["snippet_parts"]
        if p["match"]
    ]
    assert marked == ["İSTANBUL"], marked


def test_documents_indexed_before_are_queued_again(release_team):
    migration = importlib.import_module("memory.migrations.0037_search_dotted_capital_i")
    agent = release_team
    plain = agent.observe("the invoice is overdue")
    drain()
    dotted = agent.observe("meeting in İstanbul")
    drain()
    # As the index stored it before: the folded word with its combining dot.
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE memory_searchdocument SET tokens = %s::tsvector WHERE ref = %s AND context_id = %s",
            ["'meeting':1 'in':2 'i\u0307stanbul':3", dotted, agent.context.pk],
        )
        cursor.execute(migration.QUEUE)
    queued = {i.event.ref for i in IndexIntent.objects.filter(context=agent.context) if i.event}
    assert dotted in queued and plain not in queued
