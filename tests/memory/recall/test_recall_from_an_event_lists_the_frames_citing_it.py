"""Recall from an event ref starts at the event and lists the frames citing it, then walks on
from those frames; the event has no sources, and every other event stays a leaf (R63)."""

from __future__ import annotations

from typing import Any

import pytest

from memory.errors import NotFound
from memory.models import Event
from memory.recall import walk as walk_module
from memory.recall.graph import recall
from memory.shapes.recall import RecallJson
from tests.memory.conftest import Agent


@pytest.fixture
def cited(release_team: Agent) -> Agent:
    """@e1 cited by `b-notes` and `a-notes` (in that order), `summary` citing `a-notes`,
    `a-notes` also citing @e2, which `elsewhere` alone cites, and `plan` related to
    `a-notes` both ways."""
    agent = release_team
    assert agent.observe("build log") == "@e1"
    assert agent.observe("deploy log") == "@e2"
    agent.commit("(context-tx (derive elsewhere (from @e2) (n 0)) (derive plan (n 1)))")
    agent.commit("(context-tx (derive b-notes (from @e1) (n 2)))")
    agent.commit(
        "(context-tx (derive a-notes (from @e1 @e2) (n 3)) (derive summary (from a-notes) (n 4))"
        " (relate plan guides a-notes) (relate a-notes informs plan))"
    )
    return agent


def walked(result: RecallJson) -> list[tuple[str, int]]:
    return [((n["id"] if n["type"] == "frame" else n["ref"]), n["depth"]) for n in result["nodes"]]


def test_descendants_of_an_event_are_the_frames_citing_it_then_theirs(cited: Agent) -> None:
    result = recall(cited.context, frame_id="@e1", direction="descendants", depth=2)
    assert walked(result) == [
        ("@e1", 0),
        ("b-notes", 1),
        ("a-notes", 1),
        ("summary", 2),
        ("plan", 2),
    ]
    root = result["nodes"][0]
    assert root["type"] == "event" and root["kind"] == "tool_result"
    edges = {(e["from"], e["to"], e["kind"]) for e in result["edges"]}
    assert {("b-notes", "@e1", "source"), ("a-notes", "@e1", "source")} <= edges


def test_an_event_has_no_ancestors(cited: Agent) -> None:
    result = recall(cited.context, frame_id="@e1", direction="ancestors", depth=4)
    assert walked(result) == [("@e1", 0)]
    assert result["edges"] == [] and result["next_cursor"] is None


def test_both_walks_on_from_the_citing_frames_and_other_events_stay_leaves(
    cited: Agent,
) -> None:
    result = recall(cited.context, frame_id="@e1", direction="both", depth=3)
    assert walked(result) == [
        ("@e1", 0),
        ("b-notes", 1),
        ("a-notes", 1),
        ("@e2", 2),
        ("plan", 2),
        ("summary", 2),
    ]
    # `elsewhere` cites @e2, but @e2 is not the root: it is not expanded.
    assert "elsewhere" not in [n.get("id") for n in result["nodes"]]


def test_an_event_ref_the_context_does_not_have_is_not_found(cited: Agent) -> None:
    with pytest.raises(NotFound) as caught:
        recall(cited.context, frame_id="@e99", direction="descendants")
    assert "event '@e99' does not exist" in caught.value.message


@pytest.mark.parametrize("forget", [False, True])
def test_pages_from_an_event_follow_the_one_page_walk(cited: Agent, forget: bool) -> None:
    params: dict[str, Any] = {"frame_id": "@e1", "direction": "both", "depth": 3}
    params["include_events"] = True
    whole = recall(cited.context, max_nodes=128, **params)
    walk_module.forget_all()
    pages = [recall(cited.context, max_nodes=1, **params)]
    while pages[-1]["next_cursor"]:
        if forget:
            walk_module.forget_all()  # walked again from the root event
        pages.append(recall(cited.context, max_nodes=1, cursor=pages[-1]["next_cursor"], **params))
    assert [node for page in pages for node in page["nodes"]] == whole["nodes"]
    assert len(pages) == len(whole["nodes"]) == 6
    root = pages[0]["nodes"][0]
    assert root["type"] == "event" and root["content"] == "build log"

    def edge_set(result: RecallJson) -> set[tuple[str, str, str]]:
        return {(e["from"], e["to"], e["kind"]) for e in result["edges"]}

    assert set().union(*(edge_set(page) for page in pages)) == edge_set(whole)


def test_a_recall_from_an_event_can_be_appended_as_an_observation(cited: Agent) -> None:
    result = recall(cited.context, frame_id="@e1", direction="descendants", as_observation=True)
    assert walked(result) == [("@e1", 0), ("b-notes", 1), ("a-notes", 1)]
    event = Event.objects.get(context=cited.context, seq=result["observation"]["seq"])
    assert event.kind == "recall_result"
    assert event.content.startswith("[recall from @e1 descendants")
    assert "- edge a-notes -source-> @e1" in event.content
