"""Group commit (memory.tx.group): threads of one process committing on one context share a
database transaction, and each still gets exactly its own answer (R6, R10, R20, R49)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from django.db import DatabaseError, connection

from memory.contexts import create_context
from memory.errors import Conflict, MorphzError, RuleViolation
from memory.locking import context_gate
from memory.models import Context, Frame, FrameRevision, TransactionRecord
from memory.tx import group
from memory.tx.engine import submit_transaction


def transactions_of(context: Context, versions: list[int]) -> int:
    """How many database transactions wrote the records of these versions (their xmin)."""
    with connection.cursor() as cur:
        cur.execute(
            "SELECT count(DISTINCT xmin::text) FROM memory_transactionrecord "
            "WHERE context_id = %s AND committed_version = ANY(%s)",
            [context.pk, versions],
        )
        return int(cur.fetchone()[0])


def grouped(context: Context, submissions: list[dict[str, Any]]) -> list[Any]:
    """Submit each on its own thread while the context's gate is held, so they all queue;
    then open the gate: one thread leads and commits the queue in one group. Returns each
    submission's CommitResult or MorphzError (DatabaseError for a failed write)."""
    results: list[Any] = [None] * len(submissions)

    def worker(index: int) -> None:
        try:
            results[index] = submit_transaction(context.pk, **submissions[index])
        except (MorphzError, DatabaseError) as exc:
            results[index] = exc
        finally:
            connection.close()

    threads = []
    with context_gate(context.pk):
        for index in range(len(submissions)):
            thread = threading.Thread(target=worker, args=(index,))
            thread.start()
            threads.append(thread)
            # Wait until it is queued, so the queue holds them in submission order.
            while len(group._queues.get(context.pk, group._Queue()).items) <= index:
                threading.Event().wait(0.001)
    for thread in threads:
        thread.join(60)
    return results


@pytest.fixture
def shared(transactional_db):
    context = create_context("grouped")
    submit_transaction(context.pk, text="(context-tx (derive release (goal ship-v1)))")
    return context


def test_a_group_gives_each_transaction_its_own_version_error_and_replay(shared):
    results = grouped(
        shared,
        [
            {"text": "(context-tx (derive a (n 1)))"},
            {"text": "(context-tx (retire nothing-here))"},
            {"text": "(context-tx (base-version 1) (revise release (goal two)))"},
            {"text": "(context-tx (base-version 1) (revise release (goal three)))"},
            {"text": "(context-tx (derive b (n 2)))", "idempotency_key": "k"},
            {"text": "(context-tx (derive b (n 2)))", "idempotency_key": "k"},
            {"text": "(context-tx (relate a supports b))"},
        ],
    )
    a, unknown, revised, stale, first, retry, related = results
    assert a.receipt["version"] == 2
    assert isinstance(unknown, RuleViolation) and unknown.code == "unknown_ref"
    assert revised.receipt["version"] == 3
    # Decided against the state the group's earlier transaction left: release changed at 3.
    assert isinstance(stale, Conflict)
    assert stale.details[0]["ref"] == "release" and stale.details[0]["changed_version"] == 3
    assert first.receipt["version"] == 4 and not first.replayed
    assert retry.replayed and retry.record_id == first.record_id
    assert retry.receipt == first.receipt
    assert related.receipt["version"] == 5
    shared.refresh_from_db()
    assert shared.version == 5 and shared.last_seq == 5
    records = TransactionRecord.objects.filter(context=shared)
    committed = records.filter(status="committed").order_by("committed_version")
    assert list(committed.values_list("committed_version", flat=True)) == [1, 2, 3, 4, 5]
    rejected = sorted(records.filter(status="rejected").values_list("errors__code", flat=True))
    assert rejected == ["conflict", "unknown_ref"]
    release = Frame.objects.get(context=shared, frame_id="release")
    assert (release.revision, release.body) == (2, {"goal": "two"})
    assert transactions_of(shared, [2, 3, 4, 5]) == 1


@pytest.fixture
def boom_trigger(shared):
    """A real database failure for one write: inserting a frame named `boom` raises."""
    with connection.cursor() as cur:
        cur.execute(
            "CREATE FUNCTION morphz_test_boom() RETURNS trigger AS $$ BEGIN "
            "IF NEW.frame_id = 'boom' THEN RAISE EXCEPTION 'boom'; END IF; RETURN NEW; END "
            "$$ LANGUAGE plpgsql"
        )
        cur.execute(
            "CREATE TRIGGER morphz_test_boom BEFORE INSERT ON memory_frame "
            "FOR EACH ROW EXECUTE FUNCTION morphz_test_boom()"
        )
    yield shared
    with connection.cursor() as cur:
        cur.execute("DROP TRIGGER morphz_test_boom ON memory_frame")
        cur.execute("DROP FUNCTION morphz_test_boom()")


def test_a_failed_write_rolls_back_the_group_and_each_goes_again_alone(boom_trigger):
    shared = boom_trigger
    results = grouped(
        shared,
        [
            {"text": "(context-tx (derive before (n 1)))"},
            {"text": "(context-tx (derive boom (n 2)))"},
            {"text": "(context-tx (revise release (goal after)))"},
        ],
    )
    before, boom, after = results
    assert isinstance(boom, DatabaseError)
    assert before.receipt["version"] == 2 and after.receipt["version"] == 3
    shared.refresh_from_db()
    assert shared.version == 3
    assert not Frame.objects.filter(context=shared, frame_id="boom").exists()
    assert FrameRevision.objects.filter(frame__context=shared).count() == 3
    assert TransactionRecord.objects.filter(context=shared).count() == 3
    assert transactions_of(shared, [2, 3]) == 2  # each committed alone after the failure


def test_rules_read_what_earlier_transactions_of_the_group_wrote(shared):
    """The successor rule (R17) reads `supersedes` relations while applying: inside a group
    it sees those an earlier transaction of the same group created."""
    results = grouped(
        shared,
        [
            {"text": "(context-tx (derive case-a (n 1)) (derive case-b (n 2)))"},
            {
                "text": "(context-tx (derive procedure (from case-a case-b) (steps one)) "
                "(relate procedure supersedes case-a) (relate procedure supersedes case-b))"
            },
            {"text": "(context-tx (retire case-a case-b))"},
        ],
    )
    retire = results[2]
    assert [r.receipt["version"] for r in results] == [2, 3, 4]
    assert sorted(retire.receipt["completed_by_successor"]) == ["case-a", "case-b"]
    statuses = dict(
        Frame.objects.filter(context=shared, frame_id__in=["case-a", "case-b"]).values_list(
            "frame_id", "status"
        )
    )
    assert statuses == {"case-a": "retired", "case-b": "retired"}
    assert transactions_of(shared, [2, 3, 4]) == 1
