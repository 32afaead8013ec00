"""Every word findable (R62): another form of an English word finds it (`cancel` finds
`cancelled`), the word itself ranking first; a reply is found by the words of the turn it
answers."""

from __future__ import annotations

from memory.search.indexer import drain
from memory.search.query import search


def refs(result):
    return [h["ref"] for h in result["hits"]]


def test_cancel_finds_cancelled_and_the_word_itself_ranks_first(release_team):
    agent = release_team
    cancelled = agent.observe("the order was cancelled yesterday", kind="tool_result")
    said = agent.observe("cancel the order now", kind="tool_result")
    drain()
    assert refs(search(agent.context, "cancel")) == [said, cancelled]
    assert refs(search(agent.context, "cancelled")) == [cancelled, said]
    assert search(agent.context, "cancel")["hits"][1]["coverage"]["matched"] == ["cancel"]


def test_a_reply_is_found_by_the_turn_it_answers(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    agent.observe("Where did you go hiking last summer?", kind="agent_message")
    reply = agent.observe("Oh, the Dolomites, with my sister.", kind="user_message")
    agent.observe("Lunch was great today.", kind="user_message")
    drain()
    assert reply in refs(search(agent.context, "hiking trip"))
    # Two messages of one kind in a row are not an answer: nothing is borrowed.
    assert refs(search(agent.context, "Dolomites")) == [reply]
