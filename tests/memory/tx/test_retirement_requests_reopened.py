"""The retirement request rows of a window cancelled and opened again in one transaction
(R14, R15): a frame keeps exactly one pending request while it is retiring and none
otherwise, and a window cancelled in the transaction that opened it is `cancelled`, not
`completed` (the frame never retired)."""

from __future__ import annotations

import pytest

from memory.models import RetirementRequest


@pytest.fixture
def note(release_team):
    release_team.advance_ticks(2)
    release_team.commit("(context-tx (derive note (text one)))")
    return release_team


def requests(agent) -> list[tuple[int, str, int | None, int | None]]:
    """(generation, outcome, resolved tick, resolved version) of `note`'s requests."""
    return list(
        RetirementRequest.objects.filter(frame=agent.frame("note"))
        .order_by("generation")
        .values_list("generation", "outcome", "resolved_tick", "resolved_version")
    )


def test_revise_then_retire_cancels_the_pending_request_and_opens_one(note):
    note.commit("(context-tx (retire note))")
    receipt = note.commit("(context-tx (revise note (text two)) (retire note))")
    assert note.frame("note").status == "retiring"
    assert requests(note) == [(1, "cancelled", 2, receipt["version"]), (2, "pending", None, None)]


def test_restore_then_retire_cancels_the_pending_request_and_opens_one(note):
    note.commit("(context-tx (retire note))")
    receipt = note.commit("(context-tx (restore note) (retire note))")
    assert [(g, o) for g, o, _, _ in requests(note)] == [(1, "cancelled"), (2, "pending")]
    assert requests(note)[0][3] == receipt["version"]


def test_a_window_cancelled_where_it_opened_is_cancelled(note):
    receipt = note.commit("(context-tx (retire note) (revise note (text two)))")
    assert note.frame("note").status == "active"
    assert requests(note) == [(1, "cancelled", 2, receipt["version"])]


def test_retire_revise_retire_leaves_one_pending_request(note):
    note.commit("(context-tx (retire note) (revise note (text two)) (retire note))")
    assert note.frame("note").status == "retiring"
    assert [o for _, o, _, _ in requests(note)] == ["pending"]
