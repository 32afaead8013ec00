"""Two-step frame retirement counted in ticks (R14–R16)."""

from __future__ import annotations

import pytest

from memory.models import RetirementRequest
from memory.tx.retirement import expire_retirement


@pytest.fixture
def at_tick_100(release_team):
    agent = release_team
    agent.advance_ticks(100)
    assert agent.tick == 100
    agent.commit('(context-tx (derive note (text "build with make")))')
    return agent


def test_retire_at_tick_100_is_due_at_108(at_tick_100):
    receipt = at_tick_100.commit("(context-tx (retire note))")
    frame = at_tick_100.frame("note")
    assert frame.status == "retiring"
    assert frame.retire_requested_tick == 100
    assert frame.retire_due_tick == 108
    assert receipt["pending_release"] == [
        {"frame": "note", "tokens": frame.token_estimate, "due_tick": 108}
    ]
    assert receipt["released_tokens"] == 0


def test_nothing_expires_without_evaluations(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    for _ in range(20):  # reads, continuations and commits are not ticks
        agent.evaluate(continuation=True)
        agent.commit(f"(context-tx (derive scratch-{agent.version} (x y)))")
    assert agent.tick == 100
    assert agent.frame("note").status == "retiring"


def test_retiring_frame_stays_in_input_with_reason_and_ticks_left(at_tick_100):
    agent = at_tick_100
    agent.commit('(context-tx (reason "slimming") (retire note))')
    agent.advance_ticks(3)
    compiled = agent.evaluate(continuation=True)
    note = next(f for f in compiled["context"]["frames"] if f["id"] == "note")
    assert note["status"] == "retiring"
    assert note["retire"] == {
        "requested_tick": 100,
        "due_tick": 108,
        "ticks_left": 5,
        "reason": "slimming",
    }
    assert "ticks-left 5" in compiled["text"]


def test_frame_retires_when_tick_reaches_due_tick(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    agent.advance_ticks(7)
    assert agent.frame("note").status == "retiring"
    agent.advance_ticks(1)
    assert agent.tick == 108
    assert agent.frame("note").status == "retired"
    request = RetirementRequest.objects.get(frame=agent.frame("note"))
    assert (request.outcome, request.resolved_tick) == ("expired", 108)


def test_retire_keeps_original_due_tick(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    agent.advance_ticks(4)
    receipt = agent.commit("(context-tx (retire note))")
    assert receipt["results"][0]["refs"] == [
        {"ref": "note", "status": "retiring", "due_tick": 108, "changed": False}
    ]
    assert agent.frame("note").retire_due_tick == 108


def test_revise_inside_window_cancels_request(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    agent.commit('(context-tx (revise note (text "make")))')
    frame = agent.frame("note")
    assert (frame.status, frame.revision, frame.retire_due_tick) == ("active", 2, None)
    agent.advance_ticks(10)
    assert agent.frame("note").status == "active"
    assert RetirementRequest.objects.get(frame=frame).outcome == "cancelled"


def test_restore_inside_window_cancels_request(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    agent.commit("(context-tx (restore note))")
    agent.advance_ticks(10)
    frame = agent.frame("note")
    assert (frame.status, frame.revision) == ("active", 1)


def test_protect_inside_window_cancels_and_blocks_retire(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    agent.commit("(context-tx (protect note))")
    frame = agent.frame("note")
    assert (frame.status, frame.protected) == ("active", True)
    from memory.errors import RuleViolation

    with pytest.raises(RuleViolation) as caught:
        agent.commit("(context-tx (retire note))")
    assert caught.value.code == "frame_protected"


def test_unprotect_then_retire_opens_a_new_window(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (protect note))")
    agent.advance_ticks(2)
    agent.commit("(context-tx (unprotect note) (retire note))")
    frame = agent.frame("note")
    assert (frame.status, frame.protected, frame.retire_due_tick) == ("retiring", False, 110)


def test_stale_expiry_after_another_thread_revised_does_nothing(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    scheduled = agent.frame("note")
    generation, revision = scheduled.retire_generation, scheduled.revision
    # Another thread revises the frame, then retires it again: a new request, same due tick
    # would not be reached by the old expiry anyway; the old one must find nothing to do.
    agent.commit('(context-tx (revise note (text "ninja")))', thread="other")
    agent.commit("(context-tx (retire note))", thread="other")
    agent.advance_ticks(8)  # tick 108: old due tick reached, new request due at 108 too
    context = agent.refresh()
    frame_pk = scheduled.pk
    assert (
        expire_retirement(
            context, frame_pk, expected_generation=generation, expected_revision=revision
        )
        is None
    )
    assert agent.frame("note").revision == 2


def test_stale_expiry_leaves_a_revised_frame_active(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    old = agent.frame("note")
    agent.commit('(context-tx (revise note (text "ninja")))')
    agent.advance_ticks(8)
    context = agent.refresh()
    assert (
        expire_retirement(
            context,
            old.pk,
            expected_generation=old.retire_generation,
            expected_revision=old.revision,
        )
        is None
    )
    assert agent.frame("note").status == "active"


def test_counters_survive_idle_time(at_tick_100):
    agent = at_tick_100
    agent.commit("(context-tx (retire note))")
    # Nothing advances with wall-clock time: re-reading after "days" shows the same tick.
    from memory.models import Context

    fresh = Context.objects.get(pk=agent.context.pk)
    assert (fresh.tick, agent.frame("note").retire_due_tick) == (100, 108)
