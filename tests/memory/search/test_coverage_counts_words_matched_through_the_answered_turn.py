"""A reply found through words it borrowed from the turn it answers (reply context) says
so: coverage lists those words as `borrowed`, not `missing`, counting them in `share` at
the weight the ranking gives them, and the hit names the turn it answers (`answers`)."""

from __future__ import annotations

from memory.search import ranking
from memory.search.indexer import drain
from memory.search.query import search


def test_coverage_counts_words_matched_through_the_answered_turn(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    said = agent.observe("My secret codename is Snodgrassius, remember it", kind="user_message")
    reply = agent.observe("Noted, thank you", kind="agent_message")
    drain()
    hits = {hit["ref"]: hit for hit in search(agent.context, "Snodgrassius")["hits"]}
    assert hits[reply]["coverage"] == {
        "matched": [],
        "borrowed": ["snodgrassius"],
        "missing": [],
        "share": ranking.REPLY_WEIGHT,
    }
    assert hits[reply]["answers"] == said
    # The turn itself says the word: matched, and it answers nothing.
    assert hits[said]["coverage"] == {"matched": ["snodgrassius"], "missing": [], "share": 1.0}
    assert "answers" not in hits[said]


def test_a_word_said_and_a_word_borrowed_share_the_coverage(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    agent.observe("Where did you go hiking last summer?", kind="agent_message")
    reply = agent.observe("Oh, the Dolomites, with my sister.", kind="user_message")
    drain()
    hits = {hit["ref"]: hit for hit in search(agent.context, "hiking Dolomites sister")["hits"]}
    assert hits[reply]["coverage"] == {
        "matched": ["dolomites", "sister"],
        "borrowed": ["hiking"],
        "missing": [],
        "share": round((2 + ranking.REPLY_WEIGHT) / 3, 3),
    }
