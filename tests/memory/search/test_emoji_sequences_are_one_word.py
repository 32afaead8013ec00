"""A flag (two regional indicators) and an emoji ZWJ sequence (family, profession) are one
token, in the index and in the query alike; a ZWJ sequence's emoji are its parts (like an
identifier's). Before, each was split into its code points: `🇺🇸` searched for `🇺` and `🇸`
and found `🇺🇦` and `🇦🇺`, and `👨‍👩‍👧` found any text with a `👨`."""

from __future__ import annotations

import importlib

from django.db import connection

from memory.models import IndexIntent, SearchDocument
from memory.search.indexer import drain
from memory.search.query import search
from memory.search.snippets import snippet
from memory.search.textindex import index_terms, query_clauses

FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧
TECHNOLOGIST = "\U0001f469\u200d\U0001f4bb"  # 👩‍💻
TECHNOLOGIST_TONED = "\U0001f469\U0001f3fd\u200d\U0001f4bb"  # 👩🏽‍💻
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_flag_and_a_zwj_sequence_are_one_token_in_the_index_and_the_query():
    assert query_clauses("🇺🇸") == [("🇺🇸", [])]
    assert index_terms("go 🇺🇸🇦🇺") == (["go", "🇺🇸", "🇦🇺"], 3)
    assert query_clauses(FAMILY) == [(FAMILY, ["👨", "👩", "👧"])]
    assert index_terms(f"{FAMILY} home") == (["home", FAMILY, "~👨", "~👩", "~👧"], 2)
    # Skin tones and variation selectors are dropped, as from a single emoji.
    assert query_clauses(TECHNOLOGIST_TONED) == [(TECHNOLOGIST, ["👩", "💻"])]
    assert query_clauses(SCOTLAND) == [(SCOTLAND, [])]


def test_a_flag_finds_that_flag_only(release_team):
    agent = release_team
    usa = agent.observe("launch party 🇺🇸", kind="agent_message")
    agent.observe("launch party 🇺🇦", kind="agent_message")
    agent.observe("launch party 🇦🇺", kind="agent_message")
    agent.observe("launch party 🏴", kind="agent_message")
    scotland = agent.observe(f"launch party {SCOTLAND}", kind="agent_message")
    drain()
    assert refs(search(agent.context, "🇺🇸")) == [usa]
    assert refs(search(agent.context, SCOTLAND)) == [scotland]
    assert search(agent.context, "🇺")["hits"] == []  # a regional indicator is no symbol


def test_a_zwj_sequence_finds_itself_first_and_its_emoji_find_it_as_a_part(release_team):
    agent = release_team
    family = agent.observe(f"the {FAMILY} arrived", kind="agent_message")
    man = agent.observe("the 👨 arrived", kind="agent_message")
    coder = agent.observe(f"our {TECHNOLOGIST_TONED} fixed it", kind="agent_message")
    laptop = agent.observe("the 💻 broke", kind="agent_message")
    drain()
    assert refs(search(agent.context, FAMILY)) == [family]
    assert refs(search(agent.context, TECHNOLOGIST)) == [coder]
    by_part = search(agent.context, "💻")
    assert refs(by_part) == [laptop, coder]  # a part weighs half
    assert by_part["hits"][0]["score"] > by_part["hits"][1]["score"]
    assert set(refs(search(agent.context, "👨"))) == {man, family}


def test_the_snippet_marks_the_whole_flag_or_sequence():
    parts = snippet("🇺🇦 and 🇺🇸 and 🇦🇺", ["🇺🇸"])["parts"]
    assert [p["text"] for p in parts if p["match"]] == ["🇺🇸"]
    parts = snippet(f"a {TECHNOLOGIST_TONED} and a 👨", [TECHNOLOGIST, "👩", "💻"])["parts"]
    assert [p["text"] for p in parts if p["match"]] == [TECHNOLOGIST_TONED]


def test_documents_indexed_with_split_flags_are_queued_and_rewritten(release_team):
    agent = release_team
    usa = agent.observe("launch party 🇺🇸", kind="agent_message")
    agent.observe("launch party", kind="agent_message")  # no flag: not queued
    drain()
    # As the index wrote a flag before: its two regional indicators.
    old = SearchDocument.objects.get(context=agent.context, ref=usa)
    SearchDocument.objects.filter(pk=old.pk).update(tokens="'launch':1C 'party':2C '🇺':3C '🇸':4C")
    assert search(agent.context, "🇺🇸")["hits"] == []
    migration = importlib.import_module("memory.migrations.0015_search_emoji_sequences_reindex")
    with connection.cursor() as cursor:
        cursor.execute(migration.REINDEX, [migration.HOLDS_A_FLAG])
    queued = IndexIntent.objects.filter(context=agent.context)
    assert [i.event.ref for i in queued] == [usa]  # only the document with a flag
    drain()
    assert refs(search(agent.context, "🇺🇸")) == [usa]
