"""A recall cursor issued as of a past version is bound to that version: resent without
`as_of` it is refused as issued for another query (400 `invalid_cursor`), not called stale
(409 `stale_cursor`, which invites starting again without `as_of`); resent with the same
`as_of` it goes on."""

from __future__ import annotations

import pytest

from memory.errors import InvalidRequest
from memory.recall.graph import recall
from memory.versions import asof
from memory.versions.points import resolve_point


@pytest.fixture
def grown(release_team):
    agent = release_team
    leaves = " ".join(f"(derive leaf-{i:02d} (n {i}))" for i in range(10))
    sources = " ".join(f"leaf-{i:02d}" for i in range(10))
    agent.commit(f"(context-tx {leaves} (derive root (from {sources}) (kind fan)))")
    past = agent.version
    agent.commit("(context-tx (derive later (n 1)))")
    agent.refresh()  # resolve_point reads the context row as given
    return agent, past


def test_a_cursor_as_of_a_version_is_refused_without_it(grown):
    agent, past = grown
    point = resolve_point(agent.context, past)
    first = asof.recall_as_of(agent.context, point, frame_id="root", depth=1, max_nodes=2)
    with pytest.raises(InvalidRequest) as caught:
        recall(agent.context, frame_id="root", depth=1, max_nodes=2, cursor=first["next_cursor"])
    assert caught.value.code == "invalid_cursor"
    assert caught.value.details[0]["reason"] == "other_query"


def test_a_cursor_of_now_is_refused_as_of_a_version(grown):
    agent, past = grown
    first = recall(agent.context, frame_id="root", depth=1, max_nodes=2)
    point = resolve_point(agent.context, past)
    with pytest.raises(InvalidRequest) as caught:
        asof.recall_as_of(
            agent.context, point, frame_id="root", depth=1, max_nodes=2, cursor=first["next_cursor"]
        )
    assert caught.value.code == "invalid_cursor"


def test_a_cursor_as_of_a_version_goes_on_with_it(grown):
    agent, past = grown
    point = resolve_point(agent.context, past)
    page = asof.recall_as_of(agent.context, point, frame_id="root", depth=1, max_nodes=4)
    keys = [str(n.get("id")) for n in page["nodes"]]
    while page["next_cursor"]:
        page = asof.recall_as_of(
            agent.context,
            point,
            frame_id="root",
            depth=1,
            max_nodes=4,
            cursor=page["next_cursor"],
        )
        keys += [str(n.get("id")) for n in page["nodes"]]
    assert keys == ["root"] + [f"leaf-{i:02d}" for i in range(10)]
