"""A word found as another form of a query word (a stem, R62) is highlighted in the
snippet like the word itself, and the snippet opens at it: by the index's own rule (the
same stemmer, a language's stems only in a text read as that language)."""

from __future__ import annotations

from memory.search.indexer import drain
from memory.search.query import search

# French text whose stem-matched word comes past the first window of an event (240 chars).
FILLER = "Rien de notable ne s'est passé pendant le reste de la longue journée tranquille. " * 5


def marked(hit):
    return [part["text"] for part in hit["snippet_parts"] if part["match"]]


def only_hit(context, q):
    hits = search(context, q)["hits"]
    assert len(hits) == 1, hits
    return hits[0]


def test_an_english_stem_match_is_highlighted(release_team):
    agent = release_team
    agent.observe("Your order has been cancelled by the shop", kind="tool_result")
    drain()
    assert marked(only_hit(agent.context, "cancel")) == ["cancelled"]


def test_a_french_and_a_german_stem_match_are_highlighted(release_team):
    agent = release_team
    agent.observe("La commande du client a été annulée hier soir", kind="tool_result")
    agent.observe("Die Kündigungen wurden gestern vom Kundendienst bearbeitet", kind="tool_result")
    drain()
    assert marked(only_hit(agent.context, "annuler")) == ["annulée"]
    assert marked(only_hit(agent.context, "Kündigung")) == ["Kündigungen"]


def test_the_snippet_opens_at_a_stem_match_far_into_an_event(release_team):
    agent = release_team
    agent.observe(FILLER + "Par ailleurs, la commande du client a été annulée hier soir.")
    agent.observe("La commande du client est arrivée hier soir", kind="tool_result")
    drain()
    hit = only_hit(agent.context, "annuler")
    assert marked(hit) == ["annulée"]


def test_the_snippet_opens_at_a_stem_match_far_into_a_frame(release_team):
    agent = release_team
    text = FILLER + "Par ailleurs, la commande du client a été annulée hier soir."
    agent.commit(f'(context-tx (derive note (text "{text}")))')
    drain()
    assert marked(only_hit(agent.context, "annuler")) == ["annulée"]


def test_a_language_stem_is_marked_only_in_a_text_read_as_that_language(release_team):
    # In a context holding German text the query word "raten" is stemmed in German too
    # ("rat"), as English "rats" is in English; the English text, found by "grain", holds
    # no German stem, so "rats" there is no form of "raten" and is not marked.
    agent = release_team
    german = agent.observe("Die Kunden raten uns zu einer schnellen Lieferung", kind="tool_result")
    english = agent.observe("the rats ate the grain in the barn", kind="tool_result")
    drain()
    hits = {h["ref"]: h for h in search(agent.context, "raten grain")["hits"]}
    assert marked(hits[english]) == ["grain"]
    assert marked(hits[german]) == ["raten"]
