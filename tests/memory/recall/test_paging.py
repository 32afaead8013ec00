"""Paging, cursors and refusals of graph recall (R27, R29, R36)."""

from __future__ import annotations

import pytest
from django.core import signing

from memory.contexts import create_context
from memory.errors import InvalidRequest, NotFound, StaleCursor, StaleView
from memory.recall.graph import recall
from memory.tx.engine import submit_transaction


@pytest.fixture
def fan_out(release_team):
    """A root whose sources are 300 frames."""
    agent = release_team
    leaves = " ".join(f"(derive leaf-{i:03d} (n {i}))" for i in range(300))
    sources = " ".join(f"leaf-{i:03d}" for i in range(300))
    agent.commit(f"(context-tx {leaves} (derive root (from {sources}) (kind fan)))")
    return agent


def all_pages(context, **params):
    pages = [recall(context, **params)]
    while pages[-1]["next_cursor"]:
        pages.append(recall(context, cursor=pages[-1]["next_cursor"], **params))
    return pages


def node_key(node):
    return node.get("id") or node["ref"]


def test_300_frames_in_pages_of_128_without_duplicate_or_loss(fan_out):
    pages = all_pages(fan_out.context, frame_id="root", depth=1, max_nodes=128)
    assert [len(p["nodes"]) for p in pages] == [128, 128, 45]
    keys = [node_key(n) for p in pages for n in p["nodes"]]
    assert len(keys) == len(set(keys)) == 301
    assert keys[0] == "root"
    assert keys[1:] == [f"leaf-{i:03d}" for i in range(300)]
    assert pages[-1]["next_cursor"] is None


def test_each_edge_is_listed_once_across_pages(fan_out):
    pages = all_pages(fan_out.context, frame_id="root", depth=1, max_nodes=100)
    edges = [(e["from"], e["to"], e["kind"]) for p in pages for e in p["edges"]]
    assert len(edges) == len(set(edges)) == 300


def test_a_node_larger_than_the_byte_budget_comes_alone(release_team):
    agent = release_team
    big = "x" * 80_000
    agent.commit(
        f'(context-tx (derive small-1 (n 1)) (derive huge (text "{big}")) (derive small-2 (n 2))'
        " (derive root (from small-1 huge small-2) (n 0)))"
    )
    pages = all_pages(agent.context, frame_id="root", depth=1, max_nodes=128)
    assert [[node_key(n) for n in p["nodes"]] for p in pages] == [
        ["root", "small-1"],
        ["huge"],
        ["small-2"],
    ]
    assert pages[1]["nodes"][0]["body"]["text"] == big


def test_smaller_byte_budget_splits_pages_with_whole_nodes(fan_out):
    pages = all_pages(fan_out.context, frame_id="root", depth=1, max_nodes=128, page_bytes=4096)
    keys = [node_key(n) for p in pages for n in p["nodes"]]
    assert len(pages) > 3
    assert len(keys) == len(set(keys)) == 301


def test_a_commit_between_pages_makes_the_cursor_stale(fan_out):
    first = recall(fan_out.context, frame_id="root", max_nodes=128)
    fan_out.commit("(context-tx (derive unrelated (n 1)))")
    with pytest.raises(StaleCursor) as caught:
        recall(fan_out.context, frame_id="root", max_nodes=128, cursor=first["next_cursor"])
    assert caught.value.code == "stale_cursor"
    assert caught.value.details[0]["reason"] == "version_changed"


def test_a_cursor_reused_with_another_depth_is_refused(fan_out):
    first = recall(fan_out.context, frame_id="root", depth=1, max_nodes=128)
    with pytest.raises(InvalidRequest) as caught:
        recall(
            fan_out.context, frame_id="root", depth=2, max_nodes=128, cursor=first["next_cursor"]
        )
    assert caught.value.code == "invalid_cursor"
    assert caught.value.details[0]["reason"] == "other_query"


def test_a_tampered_cursor_is_refused(fan_out):
    first = recall(fan_out.context, frame_id="root", max_nodes=128)
    data = signing.loads(first["next_cursor"], salt="morphz.recall.cursor")
    forged = signing.dumps({**data, "o": 1}, salt="another-salt")
    for cursor in (forged, first["next_cursor"][:-2] + "xx", "garbage"):
        with pytest.raises(InvalidRequest) as caught:
            recall(fan_out.context, frame_id="root", max_nodes=128, cursor=cursor)
        assert caught.value.code == "invalid_cursor"


@pytest.mark.parametrize(
    ("params", "code"),
    [
        ({"depth": 5}, "invalid_depth"),
        ({"depth": 0}, "invalid_depth"),
        ({"depth": "2"}, "invalid_depth"),
        ({"max_nodes": 129}, "invalid_max_nodes"),
        ({"max_nodes": 0}, "invalid_max_nodes"),
        ({"direction": "sideways"}, "invalid_direction"),
        ({"frame_id": ""}, "invalid_frame_id"),
        ({"include_events": "yes"}, "invalid_flag"),
    ],
)
def test_out_of_range_parameters_are_refused_with_clear_codes(fan_out, params, code):
    with pytest.raises(InvalidRequest) as caught:
        recall(fan_out.context, **{"frame_id": "root", **params})
    assert caught.value.code == code


def test_an_unknown_frame_is_not_found(fan_out):
    with pytest.raises(NotFound):
        recall(fan_out.context, frame_id="no-such-frame")


def test_nothing_crosses_contexts(fan_out):
    other = create_context("other-team")
    submit_transaction(
        other.pk, text="(context-tx (derive elsewhere (n 1)) (derive root (from elsewhere) (n 0)))"
    )
    with pytest.raises(NotFound):
        recall(other, frame_id="leaf-001")
    mine = recall(fan_out.context, frame_id="root", max_nodes=128)
    assert "elsewhere" not in [node_key(n) for n in mine["nodes"]]
    theirs = recall(other, frame_id="root")
    assert [node_key(n) for n in theirs["nodes"]] == ["root", "elsewhere"]
    with pytest.raises(InvalidRequest) as caught:
        recall(other, frame_id="root", max_nodes=128, cursor=mine["next_cursor"])
    assert caught.value.code == "invalid_cursor"
    assert caught.value.details[0]["reason"] == "other_context"


def test_a_recall_inside_an_evaluation_checks_its_view_version(fan_out):
    evaluation = fan_out.evaluate()
    result = recall(fan_out.context, frame_id="root", evaluation_id=evaluation["id"])
    assert result["version"] == evaluation["view_version"]
    recall(fan_out.context, frame_id="root", view_version=evaluation["view_version"])
    fan_out.commit("(context-tx (derive later (n 1)))")
    with pytest.raises(StaleView) as caught:
        recall(fan_out.context, frame_id="root", evaluation_id=evaluation["id"])
    assert caught.value.code == "stale_view"
    with pytest.raises(StaleView):
        recall(fan_out.context, frame_id="root", view_version=evaluation["view_version"])
