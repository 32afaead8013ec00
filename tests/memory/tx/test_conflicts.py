"""Concurrent writers on one context: serialised commits, rebase or conflict (R20)."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from django.db import connection

from memory.contexts import create_context
from memory.errors import Conflict, MorphzError
from memory.models import Context, Frame, FrameRevision, TransactionRecord
from memory.tx.engine import submit_transaction


def run_in_threads(jobs: list[Callable[[], Any]]) -> list[Any]:
    """Run jobs at the same moment on separate database connections."""
    results: list[Any] = [None] * len(jobs)
    barrier = threading.Barrier(len(jobs))

    def worker(index: int, job: Callable[[], Any]) -> None:
        barrier.wait()
        try:
            results[index] = job()
        except MorphzError as exc:
            results[index] = exc
        finally:
            connection.close()

    threads = [threading.Thread(target=worker, args=(i, job)) for i, job in enumerate(jobs)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return results


@pytest.fixture
def shared(transactional_db):
    context = create_context("shared")
    submit_transaction(
        context.pk, text="(context-tx (derive release (goal ship-v1) (stage testing)))"
    )
    return context


def commit(context: Context, text: str, thread: str = "main") -> Any:
    return lambda: submit_transaction(context.pk, text=text, thread=thread).receipt


def test_two_threads_revising_release_one_commits_other_gets_conflict(shared):
    results = run_in_threads(
        [
            commit(
                shared,
                '(context-tx (base-version 1) (revise release (goal ship-v1) (stage "tests passed")))',
                "tests",
            ),
            commit(
                shared,
                '(context-tx (base-version 1) (revise release (goal ship-v1) (stage "pause the release")))',
                "user",
            ),
        ]
    )
    conflicts = [r for r in results if isinstance(r, Conflict)]
    receipts = [r for r in results if isinstance(r, dict)]
    assert len(receipts) == 1 and len(conflicts) == 1
    conflict = conflicts[0]
    assert conflict.code == "conflict"
    assert conflict.details == [
        {"ref": "release", "kind": "frame", "changed_version": 2, "revision": 2, "status": "active"}
    ]
    assert "release" in conflict.message and "revision 2" in conflict.message
    release = Frame.objects.get(context=shared, frame_id="release")
    assert release.revision == 2
    assert TransactionRecord.objects.filter(context=shared, status="rejected").count() == 1


def test_independent_frames_from_the_same_base_both_commit(shared):
    results = run_in_threads(
        [
            commit(shared, "(context-tx (base-version 1) (derive test-result (tests passed)))"),
            commit(shared, "(context-tx (base-version 1) (derive user-ask (pause yes)))"),
        ]
    )
    assert all(isinstance(r, dict) for r in results), results
    assert sorted(r["version"] for r in results) == [2, 3]
    shared.refresh_from_db()
    assert shared.version == 3


def test_old_base_with_unchanged_references_is_rebased(shared):
    submit_transaction(shared.pk, text="(context-tx (derive other (x y)))")
    receipt = submit_transaction(
        shared.pk,
        text="(context-tx (base-version 1) (revise release (goal ship-v1) (stage packaging)))",
    ).receipt
    assert receipt["version"] == 3


def test_conflict_on_retired_observation_names_the_event(shared):
    from memory.timeline.events import append_event

    ref = append_event(shared.pk, kind="tool_result", content="log").event.ref
    submit_transaction(shared.pk, text=f"(context-tx (retire {ref}))")
    with pytest.raises(Conflict) as caught:
        submit_transaction(
            shared.pk, text=f"(context-tx (base-version 1) (derive from-log (from {ref}) (x y)))"
        )
    assert caught.value.details[0]["ref"] == ref


def test_many_concurrent_writers_lose_no_update(shared):
    writers, per_writer = 8, 6

    def writer(n: int) -> Callable[[], Any]:
        def job() -> list[Any]:
            out = []
            for i in range(per_writer):
                frame = f"w{n}"
                if i == 0:
                    text = f"(context-tx (derive {frame} (count 0)))"
                else:
                    text = f"(context-tx (revise {frame} (count {i})))"
                out.append(
                    submit_transaction(shared.pk, text=text, thread=f"t{n}").receipt["version"]
                )
            # Everyone also revises the shared frame without a base: serialised, never lost.
            out.append(
                submit_transaction(
                    shared.pk, text=f"(context-tx (revise release (goal ship-v1) (by w{n})))"
                ).receipt["version"]
            )
            return out

        return job

    results = run_in_threads([writer(n) for n in range(writers)])
    assert all(isinstance(r, list) for r in results), results
    versions = sorted(v for r in results for v in r)
    total = writers * (per_writer + 1)
    assert versions == list(range(2, 2 + total))
    shared.refresh_from_db()
    assert shared.version == 1 + total
    for frame in Frame.objects.filter(context=shared):
        revisions = list(
            FrameRevision.objects.filter(frame=frame)
            .order_by("revision")
            .values_list("revision", flat=True)
        )
        assert revisions == list(range(1, frame.revision + 1))
    assert Frame.objects.get(context=shared, frame_id="release").revision == 1 + writers
