"""Graph recall on the worked examples' graph (docs/design.md) (R27, R28, R30): from a method back to the
cases and their execution logs, even after all of them were retired."""

from __future__ import annotations

from typing import Any

import pytest

from memory.models import Event, Frame
from memory.recall.graph import recall

CASES = """(context-tx
  (derive release-case-a (from {log_a}) (layout single-package) (test "npm test")
    (build "npm run build") (artifact "dist/"))
  (derive release-case-b (from {log_b}) (layout "workspace web package")
    (test "pnpm --filter web test") (build "pnpm --filter web build") (artifact "apps/web/dist/")))"""

INDUCTION = """(context-tx
  (reason "将两次发布经验归纳为可复用流程")
  (derive release-procedure
    (from release-case-a release-case-b)
    (steps "测试通过后构建，核验本次产物，再打包。")
    (applicability "先核对当前项目布局和脚本，再选择对应分支。"))
  (relate release-procedure supersedes release-case-a)
  (relate release-procedure supersedes release-case-b)
  (retire release-case-a release-case-b {log_a} {log_b}))"""


@pytest.fixture
def design_graph(release_frame, first_example):
    """Both worked examples: `test-result supports release`, and the two release cases
    induced into `release-procedure` (cases and their logs retired)."""
    agent = release_frame
    agent.commit(first_example.format(base=agent.version))
    log_a = agent.observe("npm test: 120 passed\nnpm run build: ok\ndist/ verified")
    log_b = agent.observe(
        "pnpm --filter web test: ok\npnpm --filter web build: ok\napps/web/dist/ verified"
    )
    agent.commit(CASES.format(log_a=log_a, log_b=log_b))
    agent.commit(INDUCTION.format(log_a=log_a, log_b=log_b))
    agent.logs = (log_a, log_b)
    return agent


def frame_ids(result):
    return [n["id"] for n in result["nodes"] if n["type"] == "frame"]


def event_refs(result):
    return [n["ref"] for n in result["nodes"] if n["type"] == "event"]


def test_ancestors_depth_1_gives_the_two_cases_even_when_retired(design_graph):
    result = recall(design_graph.context, frame_id="release-procedure", depth=1)
    assert frame_ids(result) == ["release-procedure", "release-case-a", "release-case-b"]
    assert event_refs(result) == []
    statuses = {n.get("id"): n["status"] for n in result["nodes"]}
    assert statuses["release-case-a"] == statuses["release-case-b"] == "retired"
    assert result["next_cursor"] is None


def test_ancestors_depth_2_reaches_the_retired_execution_logs(design_graph):
    log_a, log_b = design_graph.logs
    result = recall(design_graph.context, frame_id="release-procedure", depth=2)
    assert event_refs(result) == [log_a, log_b]
    logs = [n for n in result["nodes"] if n["type"] == "event"]
    assert all(n["retired"] and n["status"] == "retired" and n["depth"] == 2 for n in logs)
    assert logs[0]["preview"].startswith("npm test: 120 passed")
    assert "content" not in logs[0]


def test_nodes_are_listed_nearest_first_with_their_depth(design_graph):
    result = recall(design_graph.context, frame_id="release-procedure", depth=4)
    depths = [n["depth"] for n in result["nodes"]]
    assert depths == sorted(depths)
    assert depths[0] == 0


def test_frame_nodes_carry_body_revision_sources_and_status(design_graph):
    result = recall(design_graph.context, frame_id="release-procedure", depth=1)
    case_b: Any = next(n for n in result["nodes"] if n.get("id") == "release-case-b")
    assert case_b["body"]["artifact"] == "apps/web/dist/"
    assert case_b["revision"] == 1
    assert case_b["sources"] == [design_graph.logs[1]]
    bare = recall(design_graph.context, frame_id="release-procedure", depth=1, include_bodies=False)
    assert all("body" not in n for n in bare["nodes"])


def test_include_events_returns_the_full_text(design_graph):
    result = recall(design_graph.context, frame_id="release-case-b", depth=1, include_events=True)
    (log,) = [n for n in result["nodes"] if n["type"] == "event"]
    assert (
        log["content"]
        == "pnpm --filter web test: ok\npnpm --filter web build: ok\napps/web/dist/ verified"
    )


def test_edges_say_source_or_relation(design_graph):
    result = recall(design_graph.context, frame_id="release-procedure", depth=2)
    edges = {(e["from"], e["to"], e["kind"], e["name"]) for e in result["edges"]}
    log_a, log_b = design_graph.logs
    assert ("release-procedure", "release-case-a", "source", None) in edges
    assert ("release-procedure", "release-case-a", "relation", "supersedes") in edges
    assert ("release-case-b", log_b, "source", None) in edges
    assert ("release-case-a", log_a, "source", None) in edges


def test_supporter_is_found_with_descendants_and_both_not_ancestors(design_graph):
    context = design_graph.context
    assert "test-result" not in frame_ids(
        recall(context, frame_id="release", direction="ancestors")
    )
    assert "test-result" in frame_ids(recall(context, frame_id="release", direction="descendants"))
    assert "test-result" in frame_ids(recall(context, frame_id="release", direction="both"))


def test_descendants_find_frames_that_cite_a_frame(design_graph):
    result = recall(design_graph.context, frame_id="release-case-a", direction="descendants")
    assert frame_ids(result) == ["release-case-a", "release-procedure"]


def test_ancestors_of_test_result_reach_release_and_the_test_log(design_graph):
    result = recall(design_graph.context, frame_id="test-result", depth=1)
    assert frame_ids(result) == ["test-result", "release"]
    assert event_refs(result) == ["@e42"]


def test_a_relation_cycle_terminates_with_each_node_once(release_team):
    agent = release_team
    agent.commit(
        "(context-tx (derive a (x 1)) (derive b (from a) (x 2)) (derive c (from b) (x 3))"
        " (relate a depends-on b) (relate b depends-on c) (relate c depends-on a))"
    )
    for direction in ("ancestors", "descendants", "both"):
        result = recall(agent.context, frame_id="a", depth=4, direction=direction)
        ids = frame_ids(result)
        assert sorted(ids) == ["a", "b", "c"], direction
        assert result["next_cursor"] is None


def test_recall_changes_no_status(design_graph):
    before = list(Frame.objects.order_by("pk").values_list("frame_id", "status", "revision"))
    events_before = list(Event.objects.order_by("pk").values_list("seq", "active"))
    version = design_graph.version
    recall(
        design_graph.context,
        frame_id="release-procedure",
        depth=4,
        direction="both",
        include_events=True,
    )
    assert (
        list(Frame.objects.order_by("pk").values_list("frame_id", "status", "revision")) == before
    )
    assert list(Event.objects.order_by("pk").values_list("seq", "active")) == events_before
    assert design_graph.version == version


def test_recall_as_observation_appends_a_recall_result_and_changes_no_status(design_graph):
    before = list(Frame.objects.order_by("pk").values_list("frame_id", "status"))
    result = recall(
        design_graph.context,
        frame_id="release-procedure",
        depth=2,
        as_observation=True,
        thread="main",
    )
    event = Event.objects.get(context=design_graph.context, seq=result["observation"]["seq"])
    assert event.kind == "recall_result"
    assert event.active and event.is_observation
    assert "release-case-b" in event.content
    assert event.payload["nodes"] == result["nodes"]
    assert list(Frame.objects.order_by("pk").values_list("frame_id", "status")) == before
    # the observation changes no version, so the cursor stays usable
    assert result["version"] == design_graph.version
