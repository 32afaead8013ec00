"""Recall from an event as of a version: the frames that cited it then, and, before the
event was appended, a refusal that names an event (not a frame) and the version."""

from __future__ import annotations

import pytest

from memory.errors import NotFound
from memory.versions.asof import recall_as_of
from memory.versions.points import resolve_point
from tests.memory.conftest import Agent


def test_recall_as_of_a_version_before_the_event_names_the_event(release_team: Agent) -> None:
    release_team.commit("(context-tx (derive first (a b)))")
    ref = release_team.observe("late log")
    release_team.commit(f"(context-tx (derive reader (from {ref}) (c d)))")
    late = release_team.observe("later log")
    release_team.commit(f"(context-tx (derive later-reader (from {ref} {late}) (e f)))")
    context = release_team.refresh()
    then = recall_as_of(
        context, resolve_point(context, 2, "as_of"), frame_id=ref, direction="descendants"
    )
    assert [(n["id"] if n["type"] == "frame" else n["ref"]) for n in then["nodes"]] == [
        ref,
        "reader",
    ]
    with pytest.raises(NotFound) as caught:
        recall_as_of(context, resolve_point(context, 1, "as_of"), frame_id=late)
    assert f"event {late!r} did not exist at version 1" in caught.value.message
