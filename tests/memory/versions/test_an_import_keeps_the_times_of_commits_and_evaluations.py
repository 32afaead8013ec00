"""An imported context's audit trail keeps its times: each committed transaction and each
evaluation has the `created_at` it had in the exported context (as its events do), not the
time of the import. A file that carries no evaluation times (written before they were
exported) still imports; its evaluations then show the import's time."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory.contexts import create_context
from memory.demo.player import DemoPlayer
from memory.models import Context, Evaluation, Event, TransactionRecord
from memory.versions.exchange import InvalidExport, export_context, import_context
from tests.memory.versions.test_an_import_refuses_times_it_cannot_store import _unsigned
from tests.memory.versions.test_export_import import _lines

PAST = datetime(2021, 3, 4, 5, 6, 7, tzinfo=UTC)


@pytest.fixture
def aged(db: Any) -> Context:
    """The demo, its commits (with their events) and evaluations moved into the past."""
    context = create_context("aged", name="aged", grace_ticks=3)
    DemoPlayer(context).play()
    records = TransactionRecord.objects.filter(context=context, status="committed")
    for n, record in enumerate(records.order_by("pk")):
        time = PAST + timedelta(minutes=n)
        TransactionRecord.objects.filter(pk=record.pk).update(created_at=time)
        Event.objects.filter(pk=record.event_id).update(created_at=time)
    for n, evaluation in enumerate(Evaluation.objects.filter(context=context).order_by("pk")):
        Evaluation.objects.filter(pk=evaluation.pk).update(created_at=PAST + timedelta(hours=n))
    return context


def _commit_times(context: Context) -> list[tuple[int | None, datetime]]:
    records = TransactionRecord.objects.filter(context=context, status="committed")
    return list(
        records.order_by("committed_version").values_list("committed_version", "created_at")
    )


def _evaluation_times(context: Context) -> list[datetime]:
    return list(
        Evaluation.objects.filter(context=context)
        .order_by("pk")
        .values_list("created_at", flat=True)
    )


def test_commits_and_evaluations_keep_their_times(aged: Context, tmp_path: Path) -> None:
    path = tmp_path / "aged.jsonl.gz"
    export_context(aged, path)
    copy = import_context(path, slug="aged-copy").context
    assert len(_commit_times(aged)) > 1 and len(_evaluation_times(aged)) > 1
    assert _commit_times(copy) == _commit_times(aged)
    assert _evaluation_times(copy) == _evaluation_times(aged)


def test_a_file_without_evaluation_times_still_imports(aged: Context, tmp_path: Path) -> None:
    path = tmp_path / "aged.jsonl.gz"
    export_context(aged, path)
    lines = [json.loads(line) for line in _lines(path)[:-1]]
    for line in lines:
        if line["type"] == "evaluation":
            line.pop("created_at", None)
    copy = import_context(_unsigned(lines, tmp_path), slug="older", allow_unverified=True).context
    assert _commit_times(copy) == _commit_times(aged)
    assert all(t > PAST + timedelta(days=1) for t in _evaluation_times(copy))


def test_an_evaluation_time_that_cannot_be_stored_is_refused_naming_it(
    aged: Context, tmp_path: Path
) -> None:
    path = tmp_path / "aged.jsonl.gz"
    export_context(aged, path)
    lines = [json.loads(line) for line in _lines(path)[:-1]]
    next(line for line in lines if line["type"] == "evaluation")["created_at"] = "now"
    with pytest.raises(InvalidExport) as caught:
        import_context(_unsigned(lines, tmp_path), slug="bad", allow_unverified=True)
    assert "created_at of evaluation 0" in caught.value.message
    assert not Context.objects.filter(slug="bad").exists()
