"""What an evaluation compiles into the next model input (R23, R26)."""

from __future__ import annotations


def test_compiled_items_carry_token_estimates(release_team):
    agent = release_team
    agent.observe("some tool output")
    agent.commit("(context-tx (derive a (x y)))")
    result = agent.evaluate()
    items = result["context"]["frames"] + result["context"]["observations"]
    assert all(item["tokens"] > 0 for item in items)
    assert result["tokens"] >= sum(item["tokens"] for item in items)


def test_compiled_context_shows_live_relations_between_active_frames(release_team):
    agent = release_team
    agent.commit("(context-tx (derive a (x y)) (derive b (x y)) (derive c (x y)))")
    agent.commit("(context-tx (relate a supports b) (relate c supports b) (relate a blocks c))")
    agent.commit("(context-tx (unrelate a blocks c))")
    result = agent.evaluate()
    assert result["context"]["relations"] == [
        {"subject": "a", "name": "supports", "object": "b"},
        {"subject": "c", "name": "supports", "object": "b"},
    ]
    assert "## relations\n\na supports b\nc supports b" in result["text"]
