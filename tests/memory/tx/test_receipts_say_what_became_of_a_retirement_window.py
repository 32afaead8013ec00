"""A receipt says what became of a retirement window: `protect` of a retiring frame ends
the window and says `retirement_cancelled` (as `revise` does), and a repeated `retire`, which
keeps the first due tick, still lists the frame in `pending_release` (docs/transactions.md)."""

from __future__ import annotations


def _retiring(agent):
    agent.advance_ticks(10)
    agent.commit('(context-tx (derive note (text "build with make")))')
    agent.commit("(context-tx (retire note))")
    return agent.frame("note")


def test_protecting_a_retiring_frame_says_the_window_was_cancelled(release_team):
    _retiring(release_team)

    receipt = release_team.commit("(context-tx (protect note))")

    [result] = receipt["results"]
    assert result["ids"] == [
        {"ref": "note", "protected": True, "changed": True, "retirement_cancelled": True}
    ]
    assert release_team.frame("note").status == "active"
    again = release_team.commit("(context-tx (unprotect note) (protect note))")
    assert all("retirement_cancelled" not in r for op in again["results"] for r in op["ids"])


def test_a_repeated_retire_still_lists_the_frame_pending(release_team):
    frame = _retiring(release_team)

    receipt = release_team.commit("(context-tx (retire note))")

    assert receipt["results"][0]["refs"][0]["changed"] is False
    assert receipt["pending_release"] == [
        {"frame": "note", "tokens": frame.token_estimate, "due_tick": frame.retire_due_tick}
    ]
