r"""Invisible format characters (Unicode category Cf: soft hyphen, zero-width space and
joiners, bidi controls, word joiner, BOM) neither split a word nor stick to it, in the index
and in the query alike; an emoji ZWJ sequence and a subdivision flag stay one emoji. Before,
`\u202einvoice\u202c` searched for `invoice\u202c` and `in\u00advoice` for itself: neither found
`invoice`."""

from __future__ import annotations

import importlib
import unicodedata

from django.db import connection

from memory.models import IndexIntent
from memory.search.format_characters import format_characters, without_format_characters
from memory.search.indexer import drain
from memory.search.query import search
from memory.search.textindex import icu_tokens, index_terms, query_clauses, tokens

SPELLINGS = [
    "\u202einvoice\u202c",  # right-to-left override ... pop directional formatting
    "\u2066invoice\u2069",  # first strong isolate ... pop directional isolate
    "in\u00advoice",  # soft hyphen
    "in\u200bvoice",  # zero-width space
    "in\u200cvoice",  # zero-width non-joiner
    "in\u200dvoice",  # zero-width joiner
    "invoice\u2060",  # word joiner
    "\ufeffinvoice\ufeff",  # byte order mark
]
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467"  # 👨‍👩‍👧
RAINBOW = "\U0001f3f3\ufe0f\u200d\U0001f308"  # 🏳️‍🌈
SCOTLAND = "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_a_word_with_invisible_format_characters_is_the_word():
    for spelling in SPELLINGS:
        assert query_clauses(spelling) == [("invoice", [])], repr(spelling)
        assert index_terms(f"pay {spelling} now") == (["pay", "invoice", "now"], 3)
        assert tokens(f"Pay {spelling}!") == icu_tokens(f"Pay {spelling}!") == ["pay", "invoice"]


def test_every_format_character_of_every_plane_is_dropped():
    every = "".join(c for c in map(chr, range(0x110000)) if unicodedata.category(c) == "Cf")
    assert every == format_characters()
    assert without_format_characters(f"a{every}b👨") == "ab👨"


def test_a_query_with_invisible_format_characters_finds_the_word(release_team):
    agent = release_team
    invoice = agent.observe("the invoice is overdue", kind="agent_message")
    drain()
    for spelling in SPELLINGS:
        result = search(agent.context, spelling)
        assert result["query"]["tokens"] == ["invoice"], repr(spelling)
        assert refs(result) == [invoice], repr(spelling)


def test_an_event_with_invisible_format_characters_is_found_by_the_word(release_team):
    agent = release_team
    override = agent.observe("pay the \u202ewombatbill\u202c now", kind="agent_message")
    hyphens = agent.observe("the wom\u00adbat\u00adbill is due", kind="agent_message")
    drain()
    assert set(refs(search(agent.context, "wombatbill"))) == {override, hyphens}


def test_an_emoji_zwj_sequence_and_a_subdivision_flag_stay_one_emoji(release_team):
    assert query_clauses(FAMILY) == [(FAMILY, ["👨", "👩", "👧"])]
    assert query_clauses(SCOTLAND) == [(SCOTLAND, [])]
    agent = release_team
    family = agent.observe(f"the {FAMILY} arrived", kind="agent_message")
    agent.observe("the 👨 arrived", kind="agent_message")
    rainbow = agent.observe(f"a {RAINBOW} flag", kind="agent_message")
    scotland = agent.observe(f"a {SCOTLAND} flag", kind="agent_message")
    agent.observe("a 🏴 flag", kind="agent_message")
    drain()
    assert refs(search(agent.context, FAMILY)) == [family]
    assert refs(search(agent.context, RAINBOW)) == [rainbow]
    assert refs(search(agent.context, SCOTLAND)) == [scotland]


def test_documents_written_before_with_format_characters_are_queued_again(release_team):
    migration = importlib.import_module("memory.migrations.0034_search_invisible_format_characters")
    agent = release_team
    plain = agent.observe("the invoice is overdue", kind="tool_result")
    hyphens = agent.observe("the wom\u00adbat\u00adbill is due", kind="tool_result")
    payload = agent.observe("paid", kind="tool_result", payload={"memo": "in\u200bvoice"})
    agent.commit('(context-tx (derive note (text "pay the \u202ewombatbill\u202c now")))')
    agent.commit('(context-tx (derive other (text "pay the bill now")))')
    drain()
    with connection.cursor() as cursor:
        cursor.execute(migration.QUEUE)
    queued = IndexIntent.objects.filter(context=agent.context)
    events = {i.event.ref for i in queued if i.event}
    assert {hyphens, payload} <= events and plain not in events
    assert [i.frame.frame_id for i in queued if i.frame] == ["note"]
