"""Refusals name the situation the caller is in, not a neighbouring one: a frame derived
twice in one transaction is not "already existing", and a frame missing at a past version
may well exist now."""

from __future__ import annotations

import pytest

from memory.errors import NotFound, RuleViolation
from memory.recall.graph import recall
from memory.versions.asof import recall_as_of
from memory.versions.points import resolve_point


def test_deriving_one_id_twice_in_a_transaction_says_so(release_team):
    with pytest.raises(RuleViolation) as caught:
        release_team.commit("(context-tx (derive twin (a b)) (derive twin (c d)))")
    assert caught.value.code == "frame_exists"
    assert "earlier operation of this transaction" in caught.value.message


def test_deriving_an_existing_id_still_names_its_status(release_team):
    release_team.commit("(context-tx (derive twin (a b)))")
    with pytest.raises(RuleViolation) as caught:
        release_team.commit("(context-tx (derive twin (c d)))")
    assert "already exists (status active, revision 1)" in caught.value.message


def test_recall_as_of_a_version_before_the_frame_names_the_version(release_team):
    release_team.commit("(context-tx (derive first (a b)))")
    release_team.commit("(context-tx (derive later (c d)))")
    context = release_team.refresh()
    assert recall(context, frame_id="later")["nodes"]
    with pytest.raises(NotFound) as caught:
        recall_as_of(context, resolve_point(context, 1, "as_of"), frame_id="later")
    assert "did not exist at version 1" in caught.value.message
