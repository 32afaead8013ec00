"""Honest misses (R62): a document sharing only function words with the query is not a
hit, and each hit says which of the query's content words it holds."""

from __future__ import annotations

from memory.search.indexer import drain
from memory.search.query import search


def test_a_question_about_what_was_never_stored_finds_nothing(release_team):
    agent = release_team
    agent.observe("what should my next step be on the release?", kind="user_message")
    agent.observe("my build is green, what now", kind="user_message")
    agent.observe("I wonder what my manager wants", kind="user_message")
    drain()
    result = search(agent.context, "what is my favorite color?")
    assert result["hits"] == []
    assert result["total"] == 0


def test_each_hit_says_which_content_words_it_covers(release_team):
    agent = release_team
    both = agent.observe("my favorite color is teal", kind="user_message")
    one = agent.observe("the favorite release of the team", kind="user_message")
    drain()
    hits = {h["ref"]: h for h in search(agent.context, "what is my favorite color?")["hits"]}
    assert set(hits) == {both, one}
    assert hits[both]["coverage"] == {
        "matched": ["favorite", "color"],
        "missing": [],
        "share": 1.0,
    }
    assert hits[one]["coverage"] == {"matched": ["favorite"], "missing": ["color"], "share": 0.5}


def test_a_query_of_function_words_only_is_searched_as_it_is(release_team):
    agent = release_team
    ref = agent.observe("who are you and what do you do", kind="user_message")
    drain()
    assert [h["ref"] for h in search(agent.context, "who are you")["hits"]] == [ref]
