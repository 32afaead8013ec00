"""What advances the cognitive tick, and what does not (R21, R22)."""

from __future__ import annotations

from memory.models import Evaluation


def test_one_batch_of_five_tool_results_is_one_tick(release_team):
    agent = release_team
    refs = [agent.observe(f"result {i}") for i in range(5)]
    result = agent.evaluate()
    assert agent.tick == 1
    assert result["tick"] == 1
    assert result["claimed"] == refs


def test_continuation_is_not_a_tick(release_team):
    agent = release_team
    agent.observe("result")
    result = agent.evaluate(continuation=True)
    assert (agent.tick, result["claimed"]) == (0, [])
    agent.evaluate()
    assert agent.tick == 1


def test_retried_evaluation_with_same_key_is_not_a_tick(release_team):
    agent = release_team
    agent.observe("result")
    first = agent.evaluate(idempotency_key="eval-1")
    agent.observe("later result")
    retry = agent.evaluate(idempotency_key="eval-1")
    assert retry == first
    assert agent.tick == 1
    assert Evaluation.objects.filter(context=agent.context).count() == 1


def test_transaction_receipt_is_not_a_tick(release_team):
    agent = release_team
    agent.observe("result")
    agent.evaluate()
    agent.commit("(context-tx (derive seen (x y)))")
    result = agent.evaluate()
    assert (agent.tick, result["claimed"]) == (1, [])


def test_agent_message_alone_is_not_a_tick(release_team):
    agent = release_team
    agent.observe("thinking aloud", kind="agent_message")
    result = agent.evaluate()
    assert agent.tick == 0
    assert len(result["claimed"]) == 1


def test_evaluation_records_view_version(release_team):
    agent = release_team
    agent.commit("(context-tx (derive a (x y)))")
    result = agent.evaluate()
    assert result["view_version"] == agent.version == 1
    assert Evaluation.objects.get(pk=result["id"]).view_version == 1


def test_evaluation_for_one_thread_claims_only_its_inputs(release_team):
    agent = release_team
    mine = agent.observe("mine", thread="tests")
    agent.observe("theirs", thread="deploy")
    result = agent.evaluate(thread="tests")
    assert result["claimed"] == [mine]
