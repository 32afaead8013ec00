"""As of a version (R52): for every version of the two worked examples (docs/design.md) (the demo
story), frames, relations and recall as of that version equal a snapshot taken live then."""

from __future__ import annotations

from typing import Any

import pytest
from django.core import signing

from memory.contexts import create_context
from memory.demo.player import DemoPlayer
from memory.errors import InvalidRequest
from memory.models import Context
from memory.read import lists as reads
from memory.recall.checks import CURSOR_SALT
from memory.recall.graph import recall
from memory.shapes import frame_json as frame_view
from memory.versions import asof
from memory.versions.diff import diff
from memory.versions.points import resolve_point

RECALL_ROOTS = ("release", "release-web", "release-procedure", "test-result")


def _relations(items: list[Any]) -> list[tuple[Any, ...]]:
    return [
        (r.pk, r.subject.frame_id, r.name, r.object.frame_id, r.created_version, r.removed_version)
        for r in items
    ]


def _page(result: dict[str, Any]) -> dict[str, Any]:
    """A recall page with its cursor read: where the next page starts and at which version
    (a cursor as of a version is also bound to it, so its query hash differs from now's)."""
    cursor = result.get("next_cursor")
    at = signing.loads(cursor, salt=CURSOR_SALT) if cursor else None
    return dict(result, next_cursor={"o": at["o"], "v": at["v"]} if at else None)


def _live(context: Context) -> dict[str, Any]:
    context.refresh_from_db()
    frames = reads.list_frames(context, limit=10_000).items
    ids = {f.frame_id for f in frames}
    return {
        "tick": context.tick,
        "used_tokens": context.used_tokens,
        "frames": [frame_view(f, context.tick) for f in frames],
        "relations": _relations(
            reads.list_relations(context, include_removed=True, limit=10_000).items
        ),
        "recall": {
            root: _page(
                recall(context, frame_id=root, depth=2, direction="both", include_events=True)
            )
            for root in RECALL_ROOTS
            if root in ids
        },
    }


def _as_of(context: Context, version: int) -> dict[str, Any]:
    context.refresh_from_db()
    point = resolve_point(context, version)
    frames = asof.frames_as_of(context, point, limit=10_000).items
    ids = {f.frame_id for f in frames}
    for f in frames[:3]:  # the one-frame read agrees with the list
        one = asof.frame_as_of(context, point, f.frame_id)
        assert one is not None and frame_view(one, point.tick) == frame_view(f, point.tick)
    return {
        "tick": point.tick,
        "used_tokens": None,
        "frames": [frame_view(f, point.tick) for f in frames],
        "relations": _relations(
            asof.relations_as_of(context, point, include_removed=True, limit=10_000).items
        ),
        "recall": {
            root: _page(
                asof.recall_as_of(
                    context, point, frame_id=root, depth=2, direction="both", include_events=True
                )
            )
            for root in RECALL_ROOTS
            if root in ids
        },
    }


class SnapshotPlayer(DemoPlayer):
    """The demo story, with a live snapshot at the end of every version (just before the
    next commit takes the lock)."""

    def __init__(self, context: Context) -> None:
        super().__init__(context)
        self.snapshots: dict[int, dict[str, Any]] = {}

    def commit(self, text: str) -> None:
        self.context.refresh_from_db()
        self.snapshots[self.context.version] = _live(self.context)
        super().commit(text)


@pytest.fixture
def story(db: Any) -> SnapshotPlayer:
    player = SnapshotPlayer(create_context("demo", name="demo"))
    player.play()
    player.context.refresh_from_db()
    player.snapshots[player.context.version] = _live(player.context)
    return player


def test_every_version_as_of_equals_its_live_snapshot(story: SnapshotPlayer) -> None:
    context = story.context
    assert sorted(story.snapshots) == list(range(context.version + 1))
    for version, live in story.snapshots.items():
        past = _as_of(context, version)
        live = dict(live, used_tokens=None)
        assert past["frames"] == live["frames"], version
        assert past["relations"] == [r for r in live["relations"]], version
        assert past == live, version


def test_as_of_pages_and_filters(story: SnapshotPlayer) -> None:
    context = story.context
    point = resolve_point(context, 13)
    first = asof.frames_as_of(context, point, limit=3)
    assert first.has_more and len(first.items) == 3
    rest = asof.frames_as_of(context, point, after_id=first.items[-1].frame_id, limit=1000)
    every = [f.frame_id for f in asof.frames_as_of(context, point, limit=1000).items]
    assert [f.frame_id for f in first.items + rest.items] == every
    for version, status in ((13, "active"), (context.version, "retired")):
        chosen = asof.frames_as_of(
            context, resolve_point(context, version), status=status, limit=1000
        ).items
        assert chosen and all(f.status == status for f in chosen)
    # release was revised by the first example at version 13: as of 12 it waits for tests
    release_12 = asof.frame_as_of(context, resolve_point(context, 12), "release")
    assert release_12 is not None and release_12.body["stage"] == "waiting-for-tests"
    release_13 = asof.frame_as_of(context, point, "release")
    assert release_13 is not None and release_13.body["stage"] == "packaging"
    assert asof.frame_as_of(context, resolve_point(context, 12), "test-result") is None


@pytest.mark.parametrize("bad", [-1, 10**6, "x", None, True])
def test_as_of_refuses_versions_the_context_never_had(story: SnapshotPlayer, bad: Any) -> None:
    with pytest.raises(InvalidRequest) as caught:
        resolve_point(story.context, bad)
    assert caught.value.code == "invalid_version"


def test_recall_as_of_cannot_append(story: SnapshotPlayer) -> None:
    point = resolve_point(story.context, 20)
    with pytest.raises(InvalidRequest):
        asof.recall_as_of(story.context, point, frame_id="release", as_observation=True)


def test_diff_of_the_first_example_names_exactly_its_changes(story: SnapshotPlayer) -> None:
    change = diff(story.context, 12, 13)
    frames = change["frames"]
    assert [f["id"] for f in frames["derived"]] == ["test-result"]
    assert frames["derived"][0]["body"] == {"tests": "passed"}
    assert frames["revised"] == [
        {
            "id": "release",
            "from_revision": 1,
            "to_revision": 2,
            "before": {"goal": "ship-v1", "stage": "waiting-for-tests"},
            "after": {"goal": "ship-v1", "stage": "packaging"},
        }
    ]
    assert not any(frames[k] for k in ("retiring", "retired", "restored", "protected"))
    assert change["relations"] == {
        "added": [
            {"subject": "test-result", "name": "supports", "object": "release", "version": 13}
        ],
        "removed": [],
    }
    assert change["events"]["retired"] == [{"ref": "@e42"}]
    assert change["events"]["restored"] == []
    assert change["events"]["appended"][0]["ref"] == "@e43"
    assert change["events"]["appended"][0]["kind"] == "transaction"
    [tx] = change["transactions"]
    assert (tx["version"], tx["base_version"], tx["reason"]) == (
        13,
        12,
        "测试结果已吸收，继续准备发布",
    )


def test_diff_of_the_induction_names_exactly_its_changes(story: SnapshotPlayer) -> None:
    change = diff(story.context, 42, 43)
    frames = change["frames"]
    assert [f["id"] for f in frames["derived"]] == ["release-procedure"]
    assert frames["revised"] == []
    assert frames["retired"] == [
        {"id": "release-case-a", "before": "active", "after": "retired"},
        {"id": "release-case-b", "before": "active", "after": "retired"},
    ]
    assert sorted((r["subject"], r["name"], r["object"]) for r in change["relations"]["added"]) == [
        ("release-procedure", "supersedes", "release-case-a"),
        ("release-procedure", "supersedes", "release-case-b"),
    ]
    assert change["relations"]["removed"] == []
    assert change["events"]["retired"] == []
    assert [t["reason"] for t in change["transactions"]] == ["将两次发布经验归纳为可复用流程"]


def test_diff_over_the_whole_story_and_its_errors(story: SnapshotPlayer) -> None:
    context = story.context
    whole = diff(context, 0)
    assert whole["to_version"] == context.version
    assert len(whole["transactions"]) == context.version
    # @e1 came during version 0: the end of version 0 has it already
    assert resolve_point(context, 0).last_seq == 1
    assert len(whole["events"]["appended"]) == context.last_seq - 1
    assert diff(context, 5, 5)["transactions"] == []
    with pytest.raises(InvalidRequest):
        diff(context, 13, 12)
    with pytest.raises(InvalidRequest):
        diff(context, 0, context.version + 1)
