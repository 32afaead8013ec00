"""Hybrid first stage (R61): a question sharing no word with its answer finds it by
meaning; the hit says it covers none of the query's words."""

from __future__ import annotations

from memory.search.indexer import drain
from memory.search.query import search


def test_a_question_sharing_no_word_with_its_answer_finds_it(release_team):
    agent = release_team
    refund = agent.observe("Refund policy: refunds take five days.", kind="tool_result")
    agent.observe("The deploy pipeline runs nightly at 02:00.", kind="tool_result")
    drain()
    hits = search(agent.context, "how do I get my money back")["hits"]
    assert [h["ref"] for h in hits] == [refund]
    assert hits[0]["coverage"] == {"matched": [], "missing": ["get", "money", "back"], "share": 0.0}
