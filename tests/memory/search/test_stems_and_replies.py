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


def test_a_word_borrowed_from_the_turn_answered_weighs_less_than_one_said(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    asked = agent.observe("Where did you go hiking last summer?", kind="agent_message")
    reply = agent.observe("Oh, the Dolomites, with my sister.", kind="user_message")
    drain()
    assert refs(search(agent.context, "hiking")) == [asked, reply]


def test_a_question_with_function_words_finds_the_reply_by_its_turn(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    agent.observe("Did you ever try pottery?", kind="agent_message")
    reply = agent.observe("Yes! I signed up for a class yesterday.", kind="user_message")
    agent.observe("Lunch was great today.", kind="user_message")
    drain()
    # "when", "did", "I" are function words: the reply holds the content word only through
    # the turn it answers, and that counts as holding it (R62).
    assert reply in refs(search(agent.context, "when did I start pottery"))


def test_a_reply_to_a_long_turn_borrows_none_of_its_words(release_team, settings):
    settings.MORPHZ_SEARCH_REPLY_CONTEXT = True
    agent = release_team
    # A turn about many things (more than TURN_WORDS content words): the reply took up at
    # most one of them, so it lends none.
    report = (
        "Your refund of 999 dollars went to the original card; the restocking fee was waived, "
        "the prepaid label is attached, the warranty stays valid, the loyalty discount remains, "
        "shipping clawback does not apply, the replacement phone ships Tuesday from Denver, "
        "tracking arrives by email, the invoice lists every adjustment, support hours are nine "
        "to five, and the survey link expires Friday."
    )
    said = agent.observe(report, kind="agent_message")
    reply = agent.observe("Thanks, that works.", kind="user_message")
    drain()
    assert refs(search(agent.context, "Denver")) == [said]
    assert reply not in refs(search(agent.context, "warranty survey"))
