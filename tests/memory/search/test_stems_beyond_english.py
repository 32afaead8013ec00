"""Stems beyond English (R62): a text in a language Snowball stems is found by another form
of its words (`annuler` finds `annulée`), its stems marked with its language so they never
meet another language's; English text is stemmed as before, a text of no recognised
language gets no other stems."""

from __future__ import annotations

import importlib

from memory.search.indexer import drain
from memory.search.query import search
from memory.search.vectors import event_vector


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_french_is_found_by_another_form_of_its_words(release_team):
    agent = release_team
    cancelled = agent.observe("La commande du client a été annulée hier soir", kind="tool_result")
    agent.observe("La livraison est prévue pour lundi prochain", kind="tool_result")
    drain()
    assert refs(search(agent.context, "annuler")) == [cancelled]
    assert refs(search(agent.context, "annulées")) == [cancelled]
    assert search(agent.context, "annuler")["hits"][0]["coverage"]["matched"] == ["annuler"]


def test_german_spanish_and_russian_are_found_by_another_form(release_team):
    agent = release_team
    german = agent.observe(
        "Die Kündigungen wurden gestern vom Kundendienst bearbeitet", kind="tool_result"
    )
    spanish = agent.observe("Las reservas fueron canceladas ayer por el cliente")
    russian = agent.observe("Заказ был отменён вчера вечером", kind="tool_result")
    drain()
    assert refs(search(agent.context, "Kündigung")) == [german]
    assert refs(search(agent.context, "cancelar")) == [spanish]
    assert refs(search(agent.context, "отменить")) == [russian]


def test_the_word_itself_ranks_above_another_form(release_team):
    agent = release_team
    other = agent.observe("Die Kündigungen wurden gestern bearbeitet", kind="tool_result")
    itself = agent.observe("Die Kündigung wurde gestern bearbeitet", kind="tool_result")
    drain()
    assert refs(search(agent.context, "Kündigung")) == [itself, other]


def test_stems_of_two_languages_do_not_meet(release_team):
    # German "raten" stems to "rat", as English "rats" does: marked with their language,
    # the German stem does not find the English text.
    agent = release_team
    english = agent.observe("the rats ate the grain in the barn", kind="tool_result")
    drain()
    assert refs(search(agent.context, "rat")) == [english]
    assert refs(search(agent.context, "raten")) == []


def test_english_is_stemmed_as_before_and_only_in_english():
    lexemes = event_vector("tool_result", "the order was cancelled yesterday", None)[0][0]
    assert lexemes == "'the':1C 'order':2C 'was':3C 'cancelled':4C 'yesterday':5C '=cancel':6D"


def test_a_text_of_no_recognised_language_gets_no_other_stems(release_team):
    agent = release_team
    agent.observe("ID 4471 annulées", kind="tool_result")
    drain()
    assert refs(search(agent.context, "annuler")) == []
    lexemes = event_vector("tool_result", "ID 4471 annulées", None)[0][0]
    assert "'=" not in lexemes


def test_documents_written_before_in_another_script_are_queued_again(release_team):
    from django.db import connection

    from memory.models import IndexIntent

    migration = importlib.import_module("memory.migrations.0032_stems_beyond_english")
    agent = release_team
    english = agent.observe("the order was cancelled yesterday", kind="tool_result")
    french = agent.observe("La commande du client a été annulée hier soir", kind="tool_result")
    agent.commit('(context-tx (derive note (text "Die Kündigungen wurden bearbeitet")))')
    agent.commit('(context-tx (derive plain (text "the release was delayed")))')
    drain()
    with connection.cursor() as cursor:
        cursor.execute(migration.QUEUE)
    queued = IndexIntent.objects.filter(context=agent.context)
    events = {i.event.ref for i in queued if i.event}
    assert french in events and english not in events
    assert [i.frame.frame_id for i in queued if i.frame] == ["note"]
