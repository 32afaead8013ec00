"""Operations apply in order; restore then revise a retired frame (R10, R18)."""

from __future__ import annotations

import pytest

from memory.contexts import update_context_settings
from memory.errors import RuleViolation
from memory.models import TransactionRecord


@pytest.fixture
def retired_note(release_team):
    agent = release_team
    # retire takes effect at once (through the settings write, so the history has it)
    update_context_settings(agent.context.pk, grace_ticks=0)
    agent.refresh()
    agent.commit('(context-tx (derive note (text "old")))')
    agent.commit("(context-tx (retire note))")
    assert agent.frame("note").status == "retired"
    return agent


def test_restore_then_revise_in_one_transaction(retired_note):
    agent = retired_note
    receipt = agent.commit('(context-tx (restore note) (revise note (text "new")))')
    frame = agent.frame("note")
    assert (frame.status, frame.revision, frame.body) == ("active", 2, {"text": "new"})
    assert receipt["results"][1]["revision"] == 2


def test_revise_retired_frame_without_restore_is_refused(retired_note):
    agent = retired_note
    version = agent.version
    with pytest.raises(RuleViolation) as caught:
        agent.commit('(context-tx (revise note (text "new")))')
    assert caught.value.code == "frame_retired"
    assert caught.value.details[0]["index"] == 0
    assert "restore" in caught.value.message
    assert agent.version == version
    assert agent.frame("note").body == {"text": "old"}


def test_revise_keeps_sources_and_adds_new_ones(release_team):
    agent = release_team
    first = agent.observe("log one")
    second = agent.observe("log two")
    agent.commit(f"(context-tx (derive finding (from {first}) (text a)))")
    agent.commit(f"(context-tx (revise finding (from {second}) (text b)))")
    assert agent.frame("finding").sources == [first, second]


def test_rejection_lists_every_failing_operation_and_writes_nothing(release_team):
    agent = release_team
    agent.commit("(context-tx (derive kept (a b)))")
    version = agent.version
    with pytest.raises(RuleViolation) as caught:
        agent.commit(
            "(context-tx (derive fresh (a b)) (derive kept (a c)) (revise missing (a b)) (retire @e999))"
        )
    assert [d["index"] for d in caught.value.details] == [1, 2, 3]
    assert [d["code"] for d in caught.value.details] == [
        "frame_exists",
        "unknown_ref",
        "unknown_ref",
    ]
    assert agent.version == version
    assert not agent.context.frames.filter(frame_id="fresh").exists()
    rejected = TransactionRecord.objects.get(context=agent.context, status="rejected")
    assert rejected.errors["details"][0]["code"] == "frame_exists"


def test_frame_ids_are_unique_forever(retired_note):
    with pytest.raises(RuleViolation) as caught:
        retired_note.commit("(context-tx (derive note (text again)))")
    assert caught.value.code == "frame_exists"


def test_unrelate_keeps_relation_history(release_team):
    agent = release_team
    agent.commit("(context-tx (derive a (x y)) (derive b (x y)) (relate a supports b))")
    agent.commit("(context-tx (unrelate a supports b))")
    rows = list(agent.context.relations.values_list("name", "removed_version"))
    assert rows == [("supports", agent.version)]
    with pytest.raises(RuleViolation) as caught:
        agent.commit("(context-tx (unrelate a supports b))")
    assert caught.value.code == "unknown_relation"
