"""A query is stemmed only in the languages its context's documents hold (`languages.held`,
kept per context with the documents): an English context's query carries no marked stem
of another language, a French document makes the very next search stem in French, and a
fork, a cursor's next page and the migration's backfill keep the languages right."""

from __future__ import annotations

import importlib
import re

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.models import Context, SearchLanguage
from memory.search import languages, ranking
from memory.search.indexer import drain
from memory.search.query import search
from memory.timeline.events import append_event
from memory.versions.forks import fork_context
from memory.versions.replay import purge_scratch

MARKED = re.compile(r"'\^?=([a-z]+):")  # a stem marked with a language, in a tsquery literal
FRENCH = "La commande du client a été annulée hier soir"


@pytest.fixture
def sent(monkeypatch):
    """The tsquery literals each search sends (its plan's items, its content filter)."""
    literals: list[str] = []
    plan = ranking.plan

    def recording(*args, **kwargs):
        found = plan(*args, **kwargs)
        literals.extend(item.literal for item in found.items)
        literals.extend(found.params["words"] + [found.params["content"] or ""])
        return found

    monkeypatch.setattr(ranking, "plan", recording)
    return literals


def marked_languages(literals: list[str]) -> set[str]:
    return {code for literal in literals for code in MARKED.findall(literal)}


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_query_is_stemmed_in_no_other_language_without_one():
    assert languages.query_stems("annulées", frozenset()) == ()
    assert languages.query_stems("annulées", frozenset({"fr", "ru"})) == ("=fr:annul",)


def test_an_english_context_searches_no_stem_of_another_language(release_team, sent):
    agent = release_team
    cancelled = agent.observe("The order was cancelled yesterday evening")
    agent.commit('(context-tx (derive note (text "the refund was approved")))')
    drain()
    assert languages.held(agent.context.pk) == frozenset()
    assert refs(search(agent.context, "what about my cancelled order")) == [cancelled]
    assert "'=cancel'" in " ".join(sent)  # English stems as ever
    assert marked_languages(sent) == set()


@pytest.mark.parametrize("said_in", ["event", "frame"])
def test_a_french_document_makes_the_next_search_stem_in_french(release_team, sent, said_in):
    agent = release_team
    agent.observe("The order was cancelled yesterday evening")
    drain()
    assert refs(search(agent.context, "annuler la commande")) == []
    assert marked_languages(sent) == set()
    if said_in == "event":
        french = agent.observe(FRENCH)
    else:
        agent.commit(f'(context-tx (derive note (text "{FRENCH}")))')
        french = "note"
    drain()
    sent.clear()
    assert refs(search(agent.context, "annuler"))[:1] == [french]
    assert marked_languages(sent) == {"fr"}


def test_a_fork_stems_in_its_source_languages(release_team, sent):
    agent = release_team
    french = agent.observe(FRENCH)
    agent.observe("The order was cancelled yesterday evening")
    drain()
    fork = fork_context(agent.context, slug="release-fork").context
    # The copied documents are searched before any indexer runs in the fork.
    assert languages.held(fork.pk) == frozenset({"fr"})
    assert refs(search(fork, "annuler")) == [french]
    assert marked_languages(sent) == {"fr"}


def test_a_cursor_pages_with_the_languages_of_its_first_page(release_team):
    agent = release_team
    for n in range(3):
        agent.observe(f"ticket {n} отмена")  # too short to read as Russian
    drain()
    first = search(agent.context, "отмена", limit=1)
    assert first["next_cursor"] is not None
    agent.observe("Заказ был отменён вчера вечером")  # Russian: the next query stems in it
    drain()
    assert languages.held(agent.context.pk) == frozenset({"ru"})
    second = search(agent.context, "отмена", limit=1, cursor=first["next_cursor"])
    third = search(agent.context, "отмена", limit=1, cursor=second["next_cursor"])
    assert len(set(refs(first) + refs(second) + refs(third))) == 3


def test_a_purged_context_leaves_no_languages(release_team):
    agent = release_team
    agent.observe(FRENCH)
    drain()
    purge_scratch(agent.context.pk)
    assert not Context.objects.filter(pk=agent.context.pk).exists()
    assert not SearchLanguage.objects.filter(context_id=agent.context.pk).exists()


def test_the_migration_reads_the_languages_already_indexed(release_team):
    migration = importlib.import_module("memory.migrations.0033_search_languages")
    agent = release_team
    agent.observe(FRENCH)
    agent.commit('(context-tx (derive note (text "Заказ был отменён вчера вечером")))')
    agent.observe("The order was cancelled yesterday evening")
    english = create_context("english-only")
    append_event(english.pk, kind="tool_result", content="The refund was approved today")
    drain()
    SearchLanguage.objects.all().delete()
    with connection.cursor() as cursor:
        cursor.execute(migration.BACKFILL)
    assert languages.held(agent.context.pk) == frozenset({"fr", "ru"})
    assert languages.held(english.pk) == frozenset()
