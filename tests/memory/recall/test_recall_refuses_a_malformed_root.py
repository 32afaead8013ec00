"""A recall whose `frame_id` is neither a frame id nor an event ref is refused with 400 and a
code naming it, before any query: `invalid_ref` when it is shaped like an event ref (it
starts with @), `invalid_frame_id` otherwise. Every entry asks the same: `recall`,
`recall_as_of`, a model's `recall` tool call."""

from __future__ import annotations

from typing import Any

import pytest

from memory.agents.reads import run_read
from memory.errors import InvalidRequest, NotFound
from memory.recall.graph import recall
from memory.versions.asof import recall_as_of
from memory.versions.points import resolve_point
from tests.memory.conftest import Agent

BAD_REFS = ["@e0", "@E1", "@e01", "@e" + "9" * 19, "@e+3", "@e", "@", "@e1 "]
BAD_IDS = ["bad id", "Upper", "-dash", "", "x" * 129, "e1\n", 7, None]
MALFORMED = [(ref, "invalid_ref") for ref in BAD_REFS] + [(i, "invalid_frame_id") for i in BAD_IDS]


@pytest.fixture
def team(release_team: Agent) -> Agent:
    release_team.observe("build log")
    release_team.commit("(context-tx (derive e1 (from @e1) (n 1)))")
    release_team.refresh()
    return release_team


def _refused(caught: pytest.ExceptionInfo[InvalidRequest], code: str) -> None:
    assert caught.value.code == code and caught.value.code.status == 400
    assert caught.value.details[0]["field"] == "frame_id"


@pytest.mark.parametrize(("root", "code"), MALFORMED)
def test_recall_refuses_it_before_any_query(
    team: Agent, django_assert_num_queries: Any, root: Any, code: str
) -> None:
    with django_assert_num_queries(0), pytest.raises(InvalidRequest) as caught:
        recall(team.context, frame_id=root)
    _refused(caught, code)


@pytest.mark.parametrize(("root", "code"), MALFORMED)
def test_recall_as_of_refuses_it_before_any_query(
    team: Agent, django_assert_num_queries: Any, root: Any, code: str
) -> None:
    point = resolve_point(team.context, 1, "as_of")
    with django_assert_num_queries(0), pytest.raises(InvalidRequest) as caught:
        recall_as_of(team.context, point, frame_id=root)
    _refused(caught, code)


@pytest.mark.parametrize(("root", "code"), [("@e0", "invalid_ref"), ("bad id", "invalid_frame_id")])
def test_a_models_recall_tool_call_refuses_it(team: Agent, root: str, code: str) -> None:
    with pytest.raises(InvalidRequest) as caught:
        run_read(team.context, "recall", {"frame_id": root}, "main")
    _refused(caught, code)


def test_well_formed_roots_still_answer_or_are_not_found(team: Agent) -> None:
    # `e1` is a frame id (here the frame exists), not a malformed event ref.
    frame, event = (recall(team.context, frame_id=r)["nodes"][0] for r in ("e1", "@e1"))
    assert frame["type"] == "frame" and frame["id"] == "e1"
    assert event["type"] == "event" and event["ref"] == "@e1"
    for missing in ("@e999999999999999999", "nothing-here"):
        with pytest.raises(NotFound):
            recall(team.context, frame_id=missing)
